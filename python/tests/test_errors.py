"""Every kind of bad input raises its pimgnn.Error subclass with the library's message; Ctrl-C returns."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import torch

import pimgnn

EDGES = np.array([[0, 1], [1, 0]])


def test_features_of_the_wrong_shape():
    engine = pimgnn.Engine(pimgnn.Graph(EDGES), backend="cpu")
    with pytest.raises(pimgnn.ShapeError, match="expected 2, found 3"):
        engine.spmm(np.zeros((3, 4), dtype=np.float32))
    with pytest.raises(ValueError):  # also the built-in class
        engine.spmm(torch.zeros(3, 4))
    with pytest.raises(pimgnn.ShapeError, match="edge_index"):
        pimgnn.Graph(np.zeros((3, 2), dtype=np.int64))


def test_node_ids_out_of_range():
    with pytest.raises(pimgnn.IndexOutOfRangeError, match=r"target node of edge 1: index 7 out of range \(limit 3\)"):
        pimgnn.Graph(np.array([[0, 1], [1, 7]]), num_nodes=3)
    with pytest.raises(IndexError, match="source node of edge 0: index -1 is negative"):
        pimgnn.Graph(np.array([[-1], [0]]), num_nodes=3)


def test_unknown_names():
    graph = pimgnn.Graph(EDGES)
    with pytest.raises(pimgnn.InvalidError, match="`tpu` is not one of"):
        pimgnn.Engine(graph, backend="tpu")
    with pytest.raises(pimgnn.InvalidError, match="dtype"):
        pimgnn.Engine(graph, backend="cpu", dtype="f16")


def test_too_big_for_the_dpus():
    with pytest.raises(pimgnn.CapacityError, match="DPUs for plan .*needs 4, limit 2"):
        pimgnn.Engine(pimgnn.Graph(EDGES), backend="sim", dpus=2,
                      plan="csr:rows=2,split=no,cols=1,groups=2,x=whole,tasklets=1")


def test_no_hardware():
    if pimgnn.hardware_present():
        pytest.skip("this machine has UPMEM hardware")
    with pytest.raises(pimgnn.NoHardwareError, match="libdpu"):
        pimgnn.Engine(pimgnn.Graph(EDGES), backend="hw")


def test_values_that_cannot_be_quantized():
    engine = pimgnn.Engine(pimgnn.Graph(EDGES), backend="cpu", dtype="i8")
    with pytest.raises(pimgnn.NotFiniteError, match="not a finite number"):
        engine.spmm(np.array([[np.nan], [1.0]], dtype=np.float32))


def test_a_malformed_file(tmp_path):
    path = tmp_path / "graph.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n")
    with pytest.raises(pimgnn.FileError, match="graph.mtx"):
        pimgnn.Graph.read(path)


def test_a_layer_given_features_of_another_graph():
    import pimgnn.nn

    layer = pimgnn.nn.GCNConv(2, 2, engine=pimgnn.nn.EngineOptions(backend="cpu"), graph=pimgnn.Graph(EDGES))
    with pytest.raises(pimgnn.ShapeError, match="expected 5, found 2"):
        layer(torch.zeros(5, 2), None)


CTRL_C_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    import numpy as np
    import pimgnn

    def children():
        found = []
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as listing:
                found += listing.read().split()
        return found

    rng = np.random.default_rng(0)
    graph = pimgnn.Graph(rng.integers(0, 20000, size=(2, 400000)), num_nodes=20000)
    engine = pimgnn.Engine(graph, backend="sim", dpus=64, tasklets=16)
    x = rng.standard_normal((20000, 256)).astype(np.float32)
    print("calling", flush=True)
    try:
        while True:
            engine.spmm(x)
    except KeyboardInterrupt:
        print(f"interrupted at {time.monotonic()}", flush=True)
    del engine
    deadline = time.monotonic() + 120
    while children() and time.monotonic() < deadline:
        time.sleep(0.1)
    print(f"children left {len(children())}", flush=True)
    """
)


def test_ctrl_c_returns_and_leaves_no_worker_process():
    process = subprocess.Popen([sys.executable, "-c", CTRL_C_SCRIPT], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "calling"
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    line = process.stdout.readline().split()
    assert line[:2] == ["interrupted", "at"], line
    assert float(line[2]) - interrupted < 2.0, "the call returned within 2 s of Ctrl-C"
    assert process.stdout.readline().strip() == "children left 0"
    assert process.wait(timeout=60) == 0
