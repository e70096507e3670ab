#!/usr/bin/env bash
# Runs the main example on a fresh machine (installs what it needs first): the heat
# equation on a MultiFab, stepped in Rust and checked against ndarray and DLPack
# (examples/heat.rs), then driven from Python with NumPy kernels on zero-copy views
# (examples/heat.py); the smallest complete AmrCore program (examples/amr_minimal.rs:
# tagging, regrid, FillPatch, average_down, a plotfile); a two-level AMR hierarchy, subcycled and refluxed, that
# conserves mass to round-off (examples/two_level.rs), and the same hierarchy driven from
# Python (examples/two_level.py); and a particle-in-cell loop on the particle container
# (examples/particles_pic.rs: gather, push, redistribute, deposit, with the deposited
# charge equal to the particles' to round-off), whose plotfile yt then opens.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo run --release --features ndarray --example heat
cargo run --release --example two_level
cargo run --release --example amr_minimal
cargo run --release --example particles_pic
.venv/bin/python - <<'PY'
import numpy as np, yt
yt.set_log_level(40)
ds = yt.load("plt_particles_pic")
ad = ds.all_data()
x, q = ad["particle_position_x"], ad["particle_charge"]
print(f"yt: {len(x)} particles in plt_particles_pic, x in [{float(x.min()):.4f}, {float(x.max()):.4f}], "
      f"total charge {float(np.sum(q)):.0f}, deposited {float(np.sum(ad['rho'])):.6e}")
PY
bash scripts/build-python.sh
.venv/bin/python examples/heat.py
.venv/bin/python examples/two_level.py
