# same FILE_A FILE_B [REL]: the files line by line have the same words, and their numbers agree
# within REL relative (default 1e-7): a figure fitted from full precision against the same
# figure re-fitted from sweep.csv, which keeps 9 significant digits. Sourced by the batteries.
same() {
  [[ $(wc -l < "$1") == $(wc -l < "$2") ]] || return 1
  paste -d'|' "$1" "$2" | tr -d '[]{},' | awk -F'|' -v rel="${3:-1e-7}" '{
    n = split($1, a, " "); if (split($2, b, " ") != n) exit 1
    for (i = 1; i <= n; i++) {
      if (a[i] ~ /^-?[0-9][0-9.e+-]*$/ && b[i] ~ /^-?[0-9][0-9.e+-]*$/) {
        d = a[i] - b[i]; if (d < 0) d = -d; m = a[i] < 0 ? -a[i] : a[i]
        if (d > rel * m) exit 1
      } else if (a[i] != b[i]) exit 1
    }
  }'
}
