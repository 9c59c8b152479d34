# Shared by the mpi_*.sh tests: a tiny CPU config and the launcher's flags.
# shellcheck shell=bash
write_tiny_config() {
  cat > "$1" <<'YAML'
# A few bandwidth sizes and flops points: the MPI tests check coordination, not figures.
measurement:
  warmup_seconds: 0.005
  min_samples: 3
  min_seconds: 0.01
  max_noise: 0.05
  timeout_seconds: 0.05
  target_launch_seconds: 0.005
cpu:
  threads: 0
  sustained_seconds: 0
  probes:
    bandwidth:
      mode: [read]
      working_set_bytes: {min: 16KiB, max: 64MiB, points_per_octave: 1}
    flops:
      precision: [fp64]
      form: [fma]
      flops_per_element: [8, 64]
      bytes_per_thread: 16KiB
YAML
}

# OpenMPI refuses root without --allow-run-as-root and more ranks than cores without
# --oversubscribe; other launchers (MPICH's hydra) take neither.
launcher_flags() {
  if "$1" --version 2>&1 | grep -q "Open MPI"; then
    local flags="--oversubscribe"
    [[ $(id -u) == 0 ]] && flags="$flags --allow-run-as-root"
    echo "$flags"
  fi
}
