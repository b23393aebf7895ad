"""Run kiln-compiled models from Python, with numpy arrays in and out.

    import kiln_runtime
    m = kiln_runtime.load("out/")          # what `kiln compile ... -o out/` wrote
    y = m.run(x=array)                     # {"output name": numpy array, ...}

This is a thin ctypes layer over the runtime's C API (runtime/include/kiln/runtime_c.h) in
libkiln_rt.so: no compiled extension, so the package needs only numpy and the library that the
build lays out beside this file (build/python/kiln_runtime/libkiln_rt.so), or the one that the
environment variable KILN_RUNTIME_LIB names.

Inputs must have the model's dtype exactly: an array of another dtype is refused, never cast,
so that a float64 pipeline does not pass for a float32 one unnoticed. Shapes are checked by the
runtime itself (kiln_model_run_shaped), whose message names the input and both shapes. Every
failure, from the checks here or from the runtime, is a kiln_runtime.Error.
"""

import collections.abc
import ctypes
import operator
import os
import threading

import numpy

__all__ = ["Error", "Model", "TensorInfo", "load"]

_LIB_ENV = "KILN_RUNTIME_LIB"
_LIB_NAME = "libkiln_rt.so"

# kiln's dtype names (runtime/src/model_info.cpp) and their numpy types. bf16 has no numpy type
# of its own: ml_dtypes provides one (see _numpy_dtype).
_NUMPY_DTYPES = {
    "f32": numpy.float32,
    "f16": numpy.float16,
    "f64": numpy.float64,
    "i8": numpy.int8,
    "i16": numpy.int16,
    "i32": numpy.int32,
    "i64": numpy.int64,
    "u8": numpy.uint8,
    "u16": numpy.uint16,
    "u32": numpy.uint32,
    "bool": numpy.bool_,
}


class Error(RuntimeError):
    """A failure of kiln's runtime or of the checks made here before calling it.

    `code` is the runtime's status (KILN_ERROR_* of runtime_c.h, e.g. 8 for an input of the
    wrong shape), or None when the check that failed is this module's own.
    """

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


class _TensorInfoC(ctypes.Structure):
    # kiln_tensor_info of runtime_c.h.
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_char_p),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("bytes", ctypes.c_uint64),
        ("batched", ctypes.c_int32),
    ]


class _TensorC(ctypes.Structure):
    # kiln_tensor of runtime_c.h.
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
    ]


_lib = None
_lib_lock = threading.Lock()


def _library_path():
    path = os.environ.get(_LIB_ENV)
    if path:
        return path
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), _LIB_NAME)
    if os.path.exists(path):
        return path
    raise Error(
        "kiln_runtime: cannot find kiln's runtime library: set %s to libkiln_rt.so, or use "
        "the package the build lays out in BUILD/python (it carries %s)" % (_LIB_ENV, _LIB_NAME))


def _declare(lib):
    # Without argtypes, ctypes would pass Python ints as C int and truncate 64-bit pointers.
    status = ctypes.c_int32
    handle = ctypes.c_void_p
    lib.kiln_last_error.argtypes = []
    lib.kiln_last_error.restype = ctypes.c_char_p
    lib.kiln_model_load.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32,
                                    ctypes.POINTER(handle)]
    lib.kiln_model_load.restype = status
    lib.kiln_model_free.argtypes = [handle]
    lib.kiln_model_free.restype = None
    for f in (lib.kiln_model_num_inputs, lib.kiln_model_num_outputs):
        f.argtypes = [handle]
        f.restype = ctypes.c_int32
    for f in (lib.kiln_model_input_info, lib.kiln_model_output_info):
        f.argtypes = [handle, ctypes.c_int32, ctypes.POINTER(_TensorInfoC)]
        f.restype = status
    lib.kiln_model_batch_range.argtypes = [handle, ctypes.POINTER(ctypes.c_int64),
                                           ctypes.POINTER(ctypes.c_int64)]
    lib.kiln_model_batch_range.restype = status
    lib.kiln_model_verify_params.argtypes = [handle]
    lib.kiln_model_verify_params.restype = status
    lib.kiln_model_run_shaped.argtypes = [handle, ctypes.POINTER(_TensorC), ctypes.c_int32,
                                          ctypes.POINTER(ctypes.c_void_p)]
    lib.kiln_model_run_shaped.restype = status


def _library():
    # Loaded on first use rather than at import, so that importing the package never fails and
    # the error names the library when it is missing.
    global _lib
    with _lib_lock:
        if _lib is None:
            path = _library_path()
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                raise Error("kiln_runtime: cannot load %s: %s" % (path, e)) from None
            _declare(lib)
            _lib = lib
        return _lib


def _check(status):
    # kiln_last_error() is per thread: read on the thread that made the failing call.
    if status != 0:
        message = _library().kiln_last_error().decode("utf-8", "replace")
        raise Error(message, code=status)


def _numpy_dtype(kiln_dtype):
    """numpy's dtype for one of kiln's dtype names; Error when numpy has none."""
    if kiln_dtype == "bf16":
        try:
            import ml_dtypes
        except ImportError:
            raise Error("kiln_runtime: this model has bf16 tensors, which numpy has no type "
                        "for: install ml_dtypes (pip install ml_dtypes) to use them") from None
        return numpy.dtype(ml_dtypes.bfloat16)
    if kiln_dtype not in _NUMPY_DTYPES:
        raise Error("kiln_runtime: the model uses dtype '%s', which this module does not know"
                    % kiln_dtype)
    return numpy.dtype(_NUMPY_DTYPES[kiln_dtype])


class TensorInfo:
    """One input or output of a model: its name, kiln dtype name ("f32", ...) and shape.

    `batched`: axis 0 is the model's ranged batch (Model.batch_range), and `shape` is that of
    its smallest batch.
    """

    __slots__ = ("name", "dtype", "shape", "batched")

    def __init__(self, name, dtype, shape, batched=False):
        self.name = name
        self.dtype = dtype
        self.shape = tuple(shape)
        self.batched = bool(batched)

    @property
    def numpy_dtype(self):
        """The numpy dtype of the tensor's arrays (bf16 needs ml_dtypes)."""
        return _numpy_dtype(self.dtype)

    def __repr__(self):
        return "TensorInfo(name=%r, dtype=%r, shape=%r)" % (self.name, self.dtype, self.shape)

    def __str__(self):
        return "'%s' %s %s" % (self.name, self.dtype, self.shape)

    def __eq__(self, other):
        return (isinstance(other, TensorInfo)
                and (self.name, self.dtype, self.shape) == (other.name, other.dtype, other.shape))

    __hash__ = None


def _tensor_info(describe, handle, index):
    info = _TensorInfoC()
    _check(describe(handle, index, ctypes.byref(info)))
    shape = [info.shape[d] for d in range(info.ndim)]
    return TensorInfo(info.name.decode("utf-8"), info.dtype.decode("utf-8"), shape, info.batched)


def _model_files(path):
    """model.so and model.params of a model directory, or of a .so path and its .params."""
    path = os.fspath(path)
    if os.path.isdir(path):
        return os.path.join(path, "model.so"), os.path.join(path, "model.params")
    if os.path.isfile(path):
        return path, os.path.splitext(path)[0] + ".params"
    raise Error("kiln_runtime: no kiln model at '%s': give the directory that `kiln compile ... "
                "-o DIR` wrote (model.so, model.params) or its model.so" % path)


def load(path, threads=0, verify=False):
    """Loads a compiled model: `path` is its directory (model.so + model.params) or model.so.

    `threads` sizes the model's thread pool; 0 takes KILN_NUM_THREADS, else the usable CPUs.
    The weights are checked chunk by chunk during the first run (a corrupt chunk fails that run
    with Error); verify=True checks them all here instead (Model.verify_params()).
    """
    try:
        threads = operator.index(threads)  # any integer (numpy's too), not a float
    except TypeError:
        threads = -1
    if threads < 0:
        raise Error("kiln_runtime: threads must be an integer >= 0")
    so_path, params_path = _model_files(path)
    lib = _library()
    handle = ctypes.c_void_p()
    _check(lib.kiln_model_load(os.fsencode(so_path), os.fsencode(params_path), threads,
                               ctypes.byref(handle)))
    model = Model(lib, handle, so_path)
    if verify:
        try:
            model.verify_params()
        except Error:
            model.close()
            raise
    return model


class Model:
    """A loaded model. Use load() to make one; close() (or a with block) frees it."""

    def __init__(self, lib, handle, path):
        self._lib = lib
        self._handle = handle
        self.path = path
        n_in = lib.kiln_model_num_inputs(handle)
        n_out = lib.kiln_model_num_outputs(handle)
        self.inputs = [_tensor_info(lib.kiln_model_input_info, handle, i) for i in range(n_in)]
        self.outputs = [_tensor_info(lib.kiln_model_output_info, handle, i)
                        for i in range(n_out)]
        low, high = ctypes.c_int64(), ctypes.c_int64()
        _check(lib.kiln_model_batch_range(handle, ctypes.byref(low), ctypes.byref(high)))
        # (min, max) of a model compiled with `kiln compile --range`; None for a fixed batch.
        self.batch_range = (low.value, high.value) if high.value > 0 else None

    def run(self, inputs=None, /, **named):
        """Runs the model on numpy arrays given by name, as a dict, keywords, or both.

        Returns a dict: output name -> a new numpy array. Each input must have its TensorInfo's
        dtype and shape; any other array (or an unknown or missing name) raises Error. A model
        with a batch_range takes any batch in it along axis 0 of its batched inputs, and its
        outputs hold as many samples.
        """
        if self._handle is None:
            raise Error("kiln_runtime: run() on a closed model (%s)" % self.path)
        arrays = self._input_arrays(self._merge(inputs, named))
        outputs = [numpy.empty(shape, t.numpy_dtype)
                   for t, shape in zip(self.outputs, self._output_shapes(arrays))]
        self._run(arrays, outputs)
        return {t.name: out for t, out in zip(self.outputs, outputs)}

    def verify_params(self):
        """Checks every chunk of the weights no run has checked yet; Error names a corrupt one."""
        if self._handle is None:
            raise Error("kiln_runtime: verify_params() on a closed model (%s)" % self.path)
        _check(self._lib.kiln_model_verify_params(self._handle))

    def close(self):
        """Frees the model; further run() calls raise Error. Closing twice is harmless."""
        if self._handle is not None:
            self._lib.kiln_model_free(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # A model that was never closed is freed with its last reference. getattr: __init__
        # may have failed before _handle was set.
        if getattr(self, "_handle", None) is not None:
            self.close()

    def __repr__(self):
        return "kiln_runtime.Model(%r, inputs=%r, outputs=%r)" % (self.path, self.inputs,
                                                                 self.outputs)

    @staticmethod
    def _merge(inputs, named):
        if inputs is None:
            return dict(named)
        if not isinstance(inputs, collections.abc.Mapping):
            raise Error("kiln_runtime: run() takes a dict of arrays by input name, or keyword "
                        "arguments, not %s" % type(inputs).__name__)
        both = sorted(set(inputs) & set(named))
        if both:
            raise Error("kiln_runtime: input(s) %s given both in the dict and as keywords"
                        % ", ".join(both))
        return {**inputs, **named}

    def _input_arrays(self, given):
        expected = [t.name for t in self.inputs]
        unknown = sorted(set(given) - set(expected), key=str)
        missing = [name for name in expected if name not in given]
        if unknown or missing:
            problems = []
            if unknown:
                problems.append("unknown input(s) %s" % ", ".join(map(repr, unknown)))
            if missing:
                problems.append("missing input(s) %s" % ", ".join(map(repr, missing)))
            raise Error("kiln_runtime: %s; the model takes %s" % (
                "; ".join(problems), ", ".join(map(str, self.inputs)) or "no inputs"))
        return [_input_array(t, given[t.name]) for t in self.inputs]

    def _output_shapes(self, arrays):
        # The batch of the first batched input (the runtime checks the rest and the range).
        batch = None
        if self.batch_range:
            low = self.batch_range[0]
            for t, a in zip(self.inputs, arrays):
                per_sample = t.shape[0] // low if t.batched else 0
                if per_sample and a.ndim == len(t.shape) and a.shape[0] % per_sample == 0:
                    batch = a.shape[0] // per_sample
                    break
        if batch is None:
            return [t.shape for t in self.outputs]
        low = self.batch_range[0]
        return [((t.shape[0] // low) * batch,) + t.shape[1:] if t.batched else t.shape
                for t in self.outputs]

    def _run(self, arrays, outputs):
        # The shapes are stated so that the runtime checks them before anything runs; the
        # ctypes shape arrays must outlive the call, hence the list that holds them.
        shapes = [(ctypes.c_int64 * a.ndim)(*a.shape) for a in arrays]
        tensors = (_TensorC * max(len(arrays), 1))()
        for i, (a, shape) in enumerate(zip(arrays, shapes)):
            tensors[i] = _TensorC(a.ctypes.data, a.ndim,
                                  ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)))
        out_ptrs = (ctypes.c_void_p * max(len(outputs), 1))(*[o.ctypes.data for o in outputs])
        _check(self._lib.kiln_model_run_shaped(self._handle, tensors, len(arrays), out_ptrs))


def _input_array(info, value):
    """`value` as an array the runtime can read: the model's dtype, C order, aligned."""
    array = numpy.asarray(value)
    want = info.numpy_dtype
    if array.dtype != want:
        raise Error("kiln_runtime: input '%s' is %s, the model takes %s (numpy %s); nothing "
                    "is cast here: convert it with .astype() if that is intended"
                    % (info.name, array.dtype, info.dtype, want))
    # A view (a slice, a transpose) is copied into one C-contiguous, element-aligned block: the
    # runtime reads the buffer as the model's dense layout (model.h asks for element alignment).
    return numpy.require(array, requirements=["C_CONTIGUOUS", "ALIGNED"])
