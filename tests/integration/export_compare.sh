#!/usr/bin/env bash
# Exports and comparison end to end on results/reference/: every reference validates; every
# reference exports in every format (stdout and --out give the same bytes) and each export is
# read back the way its consumer reads it (python3, when present); compare prints two references
# in each format and draws the overlay (when gnuplot is present); bad input gives one-line errors.
set -uo pipefail
rp=$1 work=$2 src=$3
refs=("$src"/results/reference/*.yaml)
rm -rf "$work" && mkdir -p "$work"
source "$(dirname "$0")/expect_lib.sh"

(( ${#refs[@]} >= 7 )) || fail "expected at least 7 reference files, found ${#refs[@]}"

# ---- every reference validates --------------------------------------------------------------
for f in "${refs[@]}"; do
  if out=$("$rp" validate --strict "$f" 2>&1); then ok "validate $(basename "$f")"; else fail "validate $f: $out"; fi
done

# ---- every reference in every format ----------------------------------------------------------
formats=(ert-json nersc rocprof-csv json)
ext() { case $1 in ert-json|json) echo json ;; nersc) echo txt ;; rocprof-csv) echo csv ;; esac; }
for f in "${refs[@]}"; do
  name=$(basename "$f" .yaml)
  for fmt in "${formats[@]}"; do
    out="$work/$name.$fmt.$(ext "$fmt")"
    if ! "$rp" export "$f" --format "$fmt" > "$out.stdout" 2> "$out.stderr"; then
      fail "export $name $fmt: $(cat "$out.stderr")"; continue
    fi
    if ! "$rp" export "$f" --format "$fmt" --out "$out" 2> "$out.stderr"; then
      fail "export $name $fmt --out: $(cat "$out.stderr")"; continue
    fi
    cmp -s "$out" "$out.stdout" || fail "export $name $fmt: --out and stdout differ"
    [[ -s $out ]] || fail "export $name $fmt: empty"
  done
done
ls "$work"/.*.tmp* > /dev/null 2>&1 && fail "export --out left a temporary file"

# ---- read back as the consumers read them -----------------------------------------------------
if command -v python3 > /dev/null; then
  if python3 - "$work" "${refs[@]}" <<'PY'
import csv, glob, json, os, sys
work, refs = sys.argv[1], sys.argv[2:]
problems = []
def check(cond, what):
    if not cond: problems.append(what)

for ref in refs:
    name = os.path.basename(ref)[:-5]
    # ert-json: ERT's roofline.json layout; [name, float] pairs, highest first.
    with open(os.path.join(work, name + ".ert-json.json"), encoding="utf-8") as f:
        ert = json.load(f)
    check(set(ert) == {"empirical", "spec"}, name + ": ert top-level keys")
    emp = ert["empirical"]
    check(isinstance(emp.get("metadata"), dict), name + ": empirical.metadata")
    for section in (emp, ert["spec"]):
        for key in ("gflops", "giops", "gbytes"):
            if key == "giops" and key not in section:
                continue  # integer rates, listed only where the file has some
            data = section[key]["data"]
            check(isinstance(section[key].get("metadata"), dict), name + ": " + key + ".metadata")
            check(all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and type(p[1]) is float
                      for p in data), name + ": " + key + " pairs must be [str, float]")
            # ERT's readers take gflops data[0] as the FP64 peak: FP64.FMA leads where there is
            # one, the rest follow highest first.
            if key == "gflops" and data and any(p[0] == "FP64.FMA" for p in data):
                check(data[0][0] == "FP64.FMA", name + ": gflops data[0] is not FP64.FMA")
                data = data[1:]
            check(key != "gflops" or not any(p[0].replace("TENSOR.", "").startswith("INT") for p in data),
                  name + ": integer ops under gflops")
            values = [p[1] for p in data]
            check(values == sorted(values, reverse=True), name + ": " + key + " not highest first")
    check(len(ert["spec"]["gflops"]["data"]) > 0, name + ": spec gflops empty")
    check(len(ert["spec"]["gbytes"]["data"]) > 0, name + ": spec gbytes empty")
    # The same constraints through pydantic's strict mode, when it is installed.
    try:
        import pydantic
        from typing import Any
        class Metrics(pydantic.BaseModel):
            data: list[tuple[str, float]]
            metadata: dict[str, Any]
        class Empirical(pydantic.BaseModel):
            metadata: dict[str, Any]
            gflops: Metrics
            gbytes: Metrics
        class Ert(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(strict=True)
            empirical: Empirical
            spec: dict[str, Any]
        with open(os.path.join(work, name + ".ert-json.json"), encoding="utf-8") as f:
            Ert.model_validate_json(f.read())
    except ImportError:
        pass

    # nersc: lines picked by substring, values float(), names split on single quotes.
    found = {}
    with open(os.path.join(work, name + ".nersc.txt"), encoding="utf-8") as f:
        for line in f:
            for key in ("memroofs", "mem_roof_names", "comproofs", "comp_roof_names", "AI_HBM", "AI_L2", "AI_L1",
                        "FLOPS", "labels"):
                if key in line:
                    found.setdefault(key, []).append(line)
    # Every key once: the script reads the kernel lines unconditionally (empty without --points).
    check(sorted(found) == ["AI_HBM", "AI_L1", "AI_L2", "FLOPS", "comp_roof_names", "comproofs", "labels",
                            "mem_roof_names", "memroofs"] and all(len(v) == 1 for v in found.values()),
          name + ": nersc keys " + str(sorted(found)))
    check(all(found[k][0].split() == [k] for k in ("AI_HBM", "AI_L1", "AI_L2", "FLOPS", "labels")),
          name + ": nersc kernel lines not empty without --points")
    mem = [float(a) for a in found["memroofs"][0].split()[1:]]
    comp = [float(a) for a in found["comproofs"][0].split()[1:]]
    mem_names = [a for a in found["mem_roof_names"][0].strip().split("'") if a not in (" ", "")][1:]
    comp_names = [a for a in found["comp_roof_names"][0].strip().split("'") if a not in (" ", "")][1:]
    check(len(mem) == len(mem_names) and len(mem) > 0, name + ": nersc memroofs/names")
    check(len(comp) == len(comp_names) and len(comp) > 0, name + ": nersc comproofs/names")
    check(mem == sorted(mem, reverse=True), name + ": nersc memory roofs not in the L1, L2, HBM order")
    check(comp_names[0].split(" ")[0] == "FP64.FMA", name + ": nersc: the first compute roof is not FP64.FMA")
    check(not any(n.startswith("shared") for n in mem_names), name + ": nersc: the script has no shared roof")

    # rocprof-csv: first column dropped, columns keyed by header, one row, every value a float;
    # every FLOP peak divided by the HBM, L2, L1 and LDS bandwidths (the elbows). Every
    # reference exports (a cache without a figure is bounded below by the memory behind it).
    path = os.path.join(work, name + ".rocprof-csv.csv")
    check(os.path.exists(path), name + ": rocprof-csv was not written")
    if os.path.exists(path):
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        check(len(rows) == 2, name + ": rocprof rows")
        header, row = rows[0][1:], rows[1][1:]
        check(len(header) == len(row) == 63, name + ": rocprof columns")
        data = {k: float(v) for k, v in zip(header, row)}
        check(data["HBMBw"] > 0 and data["FP32Flops"] > 0 and data["FP64Flops"] > 0, name + ": rocprof HBM/FP32/FP64")
        check(data["HBMBwLow"] <= data["HBMBw"] <= data["hbmBwHigh"], name + ": rocprof Low/High")
        try:
            elbows = [data["FP64Flops"] / data[bw] for bw in ("HBMBw", "L2Bw", "L1Bw", "LDSBw")]
        except ZeroDivisionError:
            check(False, name + ": rocprof: a level roofline_calc divides by is 0")

    # json: the machine file, parsed by any JSON reader.
    with open(os.path.join(work, name + ".json.json"), encoding="utf-8") as f:
        m = json.load(f)
    check(m["schema"] == "roofprobe.machine/1" and isinstance(m["memory"], list) and
          all("citation" in e for e in m["memory"] + m["compute"]), name + ": json machine file")
    try:
        import yaml
        with open(ref, encoding="utf-8") as f:
            y = yaml.safe_load(f)
        check(m["device"]["name"] == y["device"]["name"] and len(m["memory"]) == len(y["memory"]) and
              [c["gflops"] for c in m["compute"]] == [float(c["gflops"]) for c in y["compute"]], name + ": json vs yaml")
    except ImportError:
        pass

for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
PY
  then ok "exports read back as ERT, the NERSC script, rocprofiler-compute and JSON read them"
  else fail "exports read back"; fi
else
  echo "note: python3 not found: exports not read back with a JSON/CSV reader"
fi

# ---- compare two references in each format ---------------------------------------------------
v100=$src/results/reference/v100-sxm2.yaml h100=$src/results/reference/h100-sxm.yaml
for fmt in text markdown csv; do
  out="$work/compare.$fmt"
  if ! "$rp" compare "$v100" "$h100" --format "$fmt" > "$out" 2> "$out.stderr"; then
    fail "compare --format $fmt: $(cat "$out.stderr")"; continue
  fi
  grep -q "V100 SXM2" "$out" && grep -q "H100 SXM5" "$out" || { fail "compare $fmt: device names missing"; continue; }
  grep -q "FP64.FMA" "$out" || { fail "compare $fmt: FP64.FMA row missing"; continue; }
  ok "compare --format $fmt ($(wc -l < "$out") lines)"
done
# Ratios to the first file: H100 HBM spec 3350 / V100 published 828.758 = 4.04.
grep -q "4.04x" "$work/compare.text" || fail "compare text: HBM ratio 4.04x missing"
# V100's L1 is published, H100 has none: shown as missing.
grep -E "^  L1 \[GB/s\] +14336 \[p\] +- +-$" "$work/compare.text" > /dev/null || fail "compare text: missing L1 not shown as -"
grep -q "^memory bandwidth,L1,GB/s,14336,published,,missing,$" "$work/compare.csv" || fail "compare csv: missing L1"
if command -v python3 > /dev/null; then
  python3 -c "import csv,sys; rows=list(csv.reader(open(sys.argv[1]))); sys.exit(0 if len({len(r) for r in rows})==1 else 1)" \
    "$work/compare.csv" || fail "compare csv: ragged rows"
fi
"$rp" compare "${refs[@]}" > "$work/compare.all" 2>&1 || fail "compare of all references: $(tail -1 "$work/compare.all")"

if command -v gnuplot > /dev/null || [[ -n ${ROOFPROBE_GNUPLOT:-} ]]; then
  if "$rp" compare "$v100" "$h100" --plot "$work/plot/compare.png" > /dev/null 2> "$work/plot.stderr" &&
     [[ $(head -c 8 "$work/plot/compare.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]; then
    ok "compare --plot wrote a PNG"
  else
    fail "compare --plot: $(cat "$work/plot.stderr")"
  fi
else
  echo "note: gnuplot not found: compare --plot not rendered"
fi

# ---- bad input: one line "error: ...", non-zero exit ------------------------------------------
cd "$work" || exit 1
refused unknown_format "use ert-json, nersc, rocprof-csv or json" -- "$rp" export "$v100" --format xml
refused unreadable_export "no such file" -- "$rp" export "$work/none.yaml" --format json
refused export_no_format "format" -- "$rp" export "$v100"
refused one_file "at least two" -- "$rp" compare "$v100"
refused compare_format "use text, markdown or csv" -- "$rp" compare "$v100" "$h100" --format html
sed 's#^schema: roofprobe.machine/1#schema: roofprobe.machine/2#' "$h100" > "$work/other-schema.yaml"
refused other_schema "other-schema.yaml.*roofprobe.machine/2" -- "$rp" compare "$v100" "$work/other-schema.yaml"
refused plot_extension "must end in .png, .svg or .pdf" -- "$rp" compare "$v100" "$h100" --plot "$work/x.jpg"
refused no_gnuplot "gnuplot not found" -- env ROOFPROBE_GNUPLOT="$work/no-gnuplot" "$rp" compare "$v100" "$h100" --plot "$work/ng/x.png"
[[ -e $work/ng/x.png ]] && fail "no_gnuplot: an image was written"
touch "$work/afile"
refused unwritable_out "afile" -- "$rp" export "$v100" --format json --out "$work/afile/sub/x.json"

# ---- plot: a --kind that names nothing, a view the file has no data for, extra points columns ---
cpu=$src/results/measured/xeon-amx-vm/20261126T1320Z/machine.yaml
refused plot_empty_kind "no view named" -- "$rp" plot "$cpu" --kind "" --out "$work/pk"
absent plot_empty_kind "$work/pk"
# With nothing drawn the error alone gives the reason (no note before it saying the same).
refused plot_no_view_with_data "nothing to plot (instruction: " -- "$rp" plot "$cpu" --kind instruction --out "$work/pi"
if command -v gnuplot > /dev/null || [[ -n ${ROOFPROBE_GNUPLOT:-} ]]; then
  printf 'kernel,level,intensity,performance,time_s,\nk,DRAM,1,10,3,\n' > "$work/extra.csv"
  expect plot_points_extra_columns ok - -- "$rp" plot "$cpu" --kind bandwidth --points "$work/extra.csv" --out "$work/pp"
  cases=$((cases + 1))
  grep -q "^note: .*extra.csv: columns time_s, column 6 are not drawn" plot_points_extra_columns.stderr &&
    ok "plot_points_extra_columns: the columns left out are named" ||
    fail "plot_points_extra_columns: no note names them: $(cat plot_points_extra_columns.stderr)"
fi

(( failures == 0 )) && echo "integration.export_compare: all ok" || { echo "$failures failures"; exit 1; }
