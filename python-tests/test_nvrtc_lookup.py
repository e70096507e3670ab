"""Where ``import amrex_rs`` finds NVRTC by itself (``AMREX_NVRTC_LIBRARY`` unset): the
folders NVIDIA's wheels use, checked on a fake ``site-packages``; no GPU or NVRTC needed.
The CUDA 13 layout (``nvidia/cu13/lib/libnvrtc.so.13``) is the one PyTorch 2.11+cu130 has
on the H200 machine of the first GPU run, where the package did not find it before."""
import os
import sys

import pytest

amr = pytest.importorskip("amrex_rs")


def fake_site(tmp_path, *libs):
    for lib in libs:
        path = tmp_path.joinpath(*lib.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    return str(tmp_path)


def found(monkeypatch, site):
    monkeypatch.setattr(sys, "path", [site])
    monkeypatch.delenv("AMREX_NVRTC_LIBRARY", raising=False)
    amr._find_nvrtc()
    return os.environ.get("AMREX_NVRTC_LIBRARY")


@pytest.mark.parametrize("lib", ["nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
                                 "nvidia/cu13/lib/libnvrtc.so.13"])
def test_each_wheel_layout_is_found(tmp_path, monkeypatch, lib):
    site = fake_site(tmp_path, lib, "nvidia/cu13/lib/libnvrtc-builtins.so.13.0")
    assert found(monkeypatch, site) == os.path.join(site, *lib.split("/"))


def test_the_cu12_wheel_comes_first_then_the_newest_major(tmp_path, monkeypatch):
    both = fake_site(tmp_path / "a", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
                     "nvidia/cu13/lib/libnvrtc.so.13")
    assert found(monkeypatch, both).endswith(os.path.join("cuda_nvrtc", "lib", "libnvrtc.so.12"))
    majors = fake_site(tmp_path / "b", "nvidia/cu13/lib/libnvrtc.so.13",
                       "nvidia/cu14/lib/libnvrtc.so.14")
    assert found(monkeypatch, majors).endswith(os.path.join("cu14", "lib", "libnvrtc.so.14"))


def test_nothing_found_leaves_the_variable_unset(tmp_path, monkeypatch):
    site = fake_site(tmp_path, "nvidia/cu13/lib/libcublas.so.13", "nvidia/curand/lib/x.so")
    assert found(monkeypatch, site) is None


def test_a_set_variable_wins(tmp_path, monkeypatch):
    site = fake_site(tmp_path, "nvidia/cu13/lib/libnvrtc.so.13")
    monkeypatch.setattr(sys, "path", [site])
    monkeypatch.setenv("AMREX_NVRTC_LIBRARY", "/elsewhere/libnvrtc.so.12")
    amr._find_nvrtc()
    assert os.environ["AMREX_NVRTC_LIBRARY"] == "/elsewhere/libnvrtc.so.12"
