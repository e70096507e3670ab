"""ctypes views of DLPack capsules and a hand-made producer, for protocol tests.

Reads capsule names and the managed tensor inside (version, flags, device, shape, strides,
byte_offset) through the stable C API, and builds capsules with chosen, possibly invalid
fields (byte offsets, NULL strides, major version 2, lanes != 1, unknown devices) whose
deleter calls are counted.
"""

import ctypes

import numpy as np

_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

KDLCPU, KDLCUDA, KDLCUDAHOST, KDLROCM, KDLROCMHOST, KDLCUDAMANAGED, KDLONEAPI = 1, 2, 3, 10, 11, 13, 14
READ_ONLY, IS_COPIED = 1, 2


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


assert ctypes.sizeof(DLTensor) == 48
assert ctypes.sizeof(DLManagedTensorVersioned) == 80
assert ctypes.sizeof(DLManagedTensor) == 64


def capsule_name(capsule):
    """The capsule's current name, as str."""
    return _api.PyCapsule_GetName(capsule).decode()


class Info:
    """What a DLPack capsule holds, read without consuming it."""

    def __init__(self, capsule):
        self.name = capsule_name(capsule)
        assert self.name in ("dltensor", "dltensor_versioned"), self.name
        ptr = _api.PyCapsule_GetPointer(capsule, self.name.encode())
        if self.name == "dltensor_versioned":
            m = DLManagedTensorVersioned.from_address(ptr)
            self.version = (m.version.major, m.version.minor)
            self.flags = m.flags
        else:
            m = DLManagedTensor.from_address(ptr)
            self.version = None
            self.flags = 0
        t = m.dl_tensor
        self.data = t.data or 0
        self.device = (t.device.device_type, t.device.device_id)
        self.ndim = t.ndim
        self.dtype = (t.dtype.code, t.dtype.bits, t.dtype.lanes)
        self.shape = tuple(t.shape[i] for i in range(t.ndim)) if t.shape else ()
        self.strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
        self.byte_offset = t.byte_offset
        self.has_deleter = bool(m.deleter)


class Producer:
    """A hand-made DLPack producer over a NumPy buffer with chosen header fields.

    ``deleted`` counts deleter calls; the buffer and header stay alive until then.
    """

    _NAME_V = b"dltensor_versioned"
    _NAME_L = b"dltensor"

    def __init__(self, buf, shape, strides, *, byte_offset=0, dtype=(2, 64, 1),
                 device=(KDLCPU, 0), version=(1, 3), flags=0, legacy=False, null_deleter=False,
                 ndim=None):
        self.buf = buf  # keeps the memory alive
        self.deleted = 0
        n = len(shape) if ndim is None else ndim
        self._shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self._strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
        t = DLTensor()
        t.data = buf.ctypes.data if buf is not None and buf.size else None
        t.device = DLDevice(*device)
        t.ndim = n
        t.dtype = DLDataType(*dtype)
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = (ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
                     if self._strides is not None else None)
        t.byte_offset = byte_offset

        def deleter(_ptr):
            self.deleted += 1

        self._deleter = DELETER(deleter)  # keep the callback alive
        if legacy:
            self.header = DLManagedTensor(t, None, DELETER() if null_deleter else self._deleter)
            name = self._NAME_L
        else:
            self.header = DLManagedTensorVersioned(
                DLPackVersion(*version), None, DELETER() if null_deleter else self._deleter,
                flags, t)
            name = self._NAME_V
        self.capsule = _api.PyCapsule_New(ctypes.addressof(self.header), name, None)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.capsule

    def __dlpack_device__(self):
        return (self.header.dl_tensor.device.device_type, self.header.dl_tensor.device.device_id)


def f64_buffer(n):
    """A fresh float64 buffer 0..n-1."""
    return np.arange(n, dtype=np.float64)
