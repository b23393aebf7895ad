"""kiln_runtime (python/) on small ONNX models compiled by kiln, checked against numpy.

ctest (tests/python/CMakeLists.txt) sets KILN_BIN to the build's kiln and PYTHONPATH to the
package the build lays out (BUILD/python). By hand:

    KILN_BIN=build/tools/kiln PYTHONPATH=build/python build/pyenv/bin/python -m pytest tests/python
"""

import os
import re
import shutil
import subprocess
import sys

import numpy
import pytest
from onnx import TensorProto, helper, numpy_helper, save_model

import kiln_runtime

RNG = numpy.random.default_rng(7)
DENSE_W = RNG.standard_normal((8, 4)).astype(numpy.float32)
DENSE_B = RNG.standard_normal(4).astype(numpy.float32)
TABLE = RNG.standard_normal((11, 6)).astype(numpy.float32)


def onnx_model(name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(value, n) for n, value in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def dense_model(batch=2):
    # y = relu(x @ W + b): a dense kernel with its epilogue; batch "N" leaves it free (ranged).
    return onnx_model(
        "dense",
        [helper.make_node("MatMul", ["x", "w"], ["h"]),
         helper.make_node("Add", ["h", "b"], ["z"]),
         helper.make_node("Relu", ["z"], ["y"])],
        [("x", TensorProto.FLOAT, [batch, 8])],
        [("y", TensorProto.FLOAT, [batch, 4])],
        [("w", DENSE_W), ("b", DENSE_B)])


def three_in_two_out_model():
    # Inputs of three shapes, one a scalar; two outputs.
    return onnx_model(
        "three",
        [helper.make_node("Add", ["a", "c"], ["sum"]),
         helper.make_node("Mul", ["a", "s"], ["scaled"])],
        [("a", TensorProto.FLOAT, [3, 5]), ("c", TensorProto.FLOAT, [5]),
         ("s", TensorProto.FLOAT, [])],
        [("sum", TensorProto.FLOAT, [3, 5]), ("scaled", TensorProto.FLOAT, [3, 5])])


def lookup_model():
    # int64 ids and a bool mask in (what kiln compiles besides f32), f32 and int32 out.
    return onnx_model(
        "lookup",
        [helper.make_node("Gather", ["table", "ids"], ["rows"]),
         helper.make_node("Unsqueeze", ["mask", "last"], ["mask3"]),
         helper.make_node("Where", ["mask3", "rows", "zero"], ["emb"]),
         helper.make_node("Cast", ["mask"], ["mask_i32"], to=TensorProto.INT32),
         helper.make_node("ReduceSum", ["mask_i32", "one"], ["count"], keepdims=0)],
        [("ids", TensorProto.INT64, [2, 3]), ("mask", TensorProto.BOOL, [2, 3])],
        [("emb", TensorProto.FLOAT, [2, 3, 6]), ("count", TensorProto.INT32, [2])],
        [("table", TABLE), ("last", numpy.array([-1], numpy.int64)),
         ("zero", numpy.array(0, numpy.float32)), ("one", numpy.array([1], numpy.int64))])


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """name -> the directory `kiln compile` wrote for it."""
    kiln = os.environ.get("KILN_BIN")
    if not kiln:
        pytest.fail("KILN_BIN must name the kiln binary (ctest sets it)")
    root = tmp_path_factory.mktemp("models")
    dirs = {}
    for name, make, flags in [("dense", dense_model, []), ("three", three_in_two_out_model, []),
                              ("lookup", lookup_model, []),
                              ("ranged", lambda: dense_model("N"), ["--range", "N=1..16"])]:
        save_model(make(), str(root / (name + ".onnx")))
        out = root / name
        subprocess.run([kiln, "compile", str(root / (name + ".onnx")), "--target", "host",
                        "-o", str(out)] + flags, check=True, stdout=subprocess.DEVNULL)
        dirs[name] = out
    return dirs


@pytest.fixture
def dense(models):
    with kiln_runtime.load(models["dense"], threads=1) as m:
        yield m


def dense_input():
    return RNG.standard_normal((2, 8)).astype(numpy.float32)


def dense_reference(x):
    return numpy.maximum(x @ DENSE_W + DENSE_B, 0)


def test_dense_matches_numpy(dense):
    x = dense_input()
    y = dense.run(x=x)
    assert list(y) == ["y"]
    assert y["y"].dtype == numpy.float32 and y["y"].shape == (2, 4)
    numpy.testing.assert_allclose(y["y"], dense_reference(x), rtol=1e-5, atol=1e-5)


def test_model_describes_its_tensors(dense):
    assert dense.inputs == [kiln_runtime.TensorInfo("x", "f32", (2, 8))]
    assert dense.outputs == [kiln_runtime.TensorInfo("y", "f32", (2, 4))]
    assert dense.inputs[0].numpy_dtype == numpy.float32


def test_a_ranged_batch_runs_any_batch_in_its_range(models):
    with kiln_runtime.load(models["ranged"], threads=2) as m:
        assert m.batch_range == (1, 16)
        assert m.inputs[0].batched and m.inputs[0].shape == (1, 8)
        for batch in (1, 5, 16):
            x = RNG.standard_normal((batch, 8)).astype(numpy.float32)
            y = m.run(x=x)["y"]
            assert y.shape == (batch, 4)
            numpy.testing.assert_allclose(y, dense_reference(x), rtol=1e-5, atol=1e-5)
        for bad, words in [((17, 8), "holds a batch of 17 along axis 0, the model takes 1 to 16"),
                           ((0, 8), "holds a batch of 0"), ((4, 9), "the model takes (batch, 8)")]:
            with pytest.raises(kiln_runtime.Error, match=re.escape(words)):
                m.run(x=numpy.zeros(bad, numpy.float32))
    with kiln_runtime.load(models["dense"]) as fixed:
        assert fixed.batch_range is None and not fixed.inputs[0].batched


def test_three_inputs_two_outputs_by_dict_and_keywords(models):
    a = RNG.standard_normal((3, 5)).astype(numpy.float32)
    c = RNG.standard_normal(5).astype(numpy.float32)
    s = numpy.float32(-1.5)
    with kiln_runtime.load(models["three"]) as m:
        assert [t.shape for t in m.inputs] == [(3, 5), (5,), ()]
        by_dict = m.run({"a": a, "c": c, "s": s})
        mixed = m.run({"a": a}, c=c, s=numpy.array(s))
    for y in (by_dict, mixed):
        assert sorted(y) == ["scaled", "sum"]
        numpy.testing.assert_allclose(y["sum"], a + c, rtol=1e-6)
        numpy.testing.assert_allclose(y["scaled"], a * s, rtol=1e-6)


def test_int64_and_bool_inputs(models):
    ids = numpy.array([[0, 3, 10], [-1, 2, 5]], numpy.int64)
    mask = numpy.array([[True, False, True], [True, True, False]])
    with kiln_runtime.load(models["lookup"]) as m:
        assert [t.dtype for t in m.inputs] == ["i64", "bool"]
        y = m.run(ids=ids, mask=mask)
        assert y["count"].dtype == numpy.int32
        numpy.testing.assert_array_equal(y["count"], mask.sum(axis=1))
        numpy.testing.assert_array_equal(y["emb"], numpy.where(mask[..., None], TABLE[ids], 0))
        # An id out of the table's range is the runtime's KILN_ERROR_INVALID_INPUT.
        with pytest.raises(kiln_runtime.Error, match="out of range") as e:
            m.run(ids=ids + 20, mask=mask)
        assert e.value.code == 8


def test_runs_twice_with_one_and_two_threads_into_fresh_arrays(models):
    x = dense_input()
    for threads in (1, 2):
        with kiln_runtime.load(models["dense"], threads=threads) as m:
            first, second = m.run(x=x)["y"], m.run(x=x)["y"]
            assert first is not second
            numpy.testing.assert_array_equal(first, second)
            numpy.testing.assert_allclose(first, dense_reference(x), rtol=1e-5, atol=1e-5)


def test_non_contiguous_input_is_copied(dense):
    wide = RNG.standard_normal((2, 16)).astype(numpy.float32)
    view = wide[:, ::2]
    assert not view.flags.c_contiguous
    numpy.testing.assert_allclose(dense.run(x=view)["y"], dense_reference(view), rtol=1e-5,
                                  atol=1e-5)
    fortran = numpy.asfortranarray(dense_input())
    numpy.testing.assert_array_equal(dense.run(x=fortran)["y"],
                                     dense.run(x=numpy.ascontiguousarray(fortran))["y"])


def test_wrong_dtype_is_refused_not_cast(dense):
    with pytest.raises(kiln_runtime.Error, match=r"input 'x' is float64, the model takes f32"):
        dense.run(x=dense_input().astype(numpy.float64))


def test_wrong_shape_is_the_runtime_message(dense):
    with pytest.raises(kiln_runtime.Error, match=r"'x'.*\(1, 8\).*\(2, 8\)") as e:
        dense.run(x=dense_input()[:1])
    assert e.value.code == 8  # KILN_ERROR_INVALID_INPUT


def test_missing_input(models):
    with kiln_runtime.load(models["three"]) as m:
        with pytest.raises(kiln_runtime.Error, match=r"missing input\(s\) 'c', 's'"):
            m.run(a=numpy.zeros((3, 5), numpy.float32))


def test_unknown_input(dense):
    with pytest.raises(kiln_runtime.Error, match=r"unknown input\(s\) 'z'.*takes 'x' f32"):
        dense.run(x=dense_input(), z=dense_input())


def test_bad_paths(models, tmp_path):
    with pytest.raises(kiln_runtime.Error, match="no kiln model at"):
        kiln_runtime.load(tmp_path / "nowhere")
    with pytest.raises(kiln_runtime.Error, match="model.json") as e:
        kiln_runtime.load(models["dense"] / "model.json")  # not a shared library
    assert e.value.code == 2  # KILN_ERROR_LOAD
    with pytest.raises(kiln_runtime.Error, match="threads"):
        kiln_runtime.load(models["dense"], threads=-1)


def test_corrupt_weights_fail_the_first_run_or_verify(models, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(models["dense"], bad)
    data = bytearray((bad / "model.params").read_bytes())
    data[64 + 3] ^= 0x20  # a payload byte: the header and chunk table stay sound
    (bad / "model.params").write_bytes(bytes(data))
    with kiln_runtime.load(bad, threads=1) as m:  # loading reads no weights
        with pytest.raises(kiln_runtime.Error, match="checksum mismatch in chunk 0") as e:
            m.run(x=dense_input())
        assert e.value.code == 7  # KILN_ERROR_PARAMS
    with pytest.raises(kiln_runtime.Error, match="checksum mismatch in chunk 0"):
        kiln_runtime.load(bad, threads=1, verify=True)
    with kiln_runtime.load(models["dense"], threads=1, verify=True) as m:
        numpy.testing.assert_allclose(m.run(x=dense_input())["y"].shape, (2, 4))


def test_model_so_path_and_closed_model(models):
    m = kiln_runtime.load(models["dense"] / "model.so")
    m.close()
    m.close()
    with pytest.raises(kiln_runtime.Error, match="closed"):
        m.run(x=dense_input())


def test_half_dtypes(monkeypatch):
    assert kiln_runtime.TensorInfo("h", "f16", (1,)).numpy_dtype == numpy.float16
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert kiln_runtime.TensorInfo("b", "bf16", (1,)).numpy_dtype == ml_dtypes.bfloat16
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # import ml_dtypes now fails
    with pytest.raises(kiln_runtime.Error, match="bf16.*install ml_dtypes"):
        kiln_runtime.TensorInfo("b", "bf16", (1,)).numpy_dtype


def test_missing_library_is_a_clear_error(models):
    # The library is loaded once per process: a fresh one sees KILN_RUNTIME_LIB.
    env = dict(os.environ, KILN_RUNTIME_LIB=os.path.join(str(models["dense"]), "libnone.so"))
    code = ("import kiln_runtime, sys\n"
            "try:\n"
            "    kiln_runtime.load(sys.argv[1])\n"
            "except kiln_runtime.Error as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code, str(models["dense"])], env=env,
                         check=True, capture_output=True, text=True).stdout
    assert "cannot load" in out and "libnone.so" in out
