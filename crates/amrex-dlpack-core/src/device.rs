//! Devices: [`Device`] helpers over `DLDevice`.

use crate::ffi::{DLDevice, DLDeviceType};

/// Where a tensor lives (`DLDevice`).
pub type Device = DLDevice;

impl DLDevice {
    /// Host memory (`kDLCPU`, id 0).
    pub const CPU: Self = Self {
        device_type: DLDeviceType::CPU,
        device_id: 0,
    };

    /// A device of the given type and ordinal.
    pub const fn new(device_type: DLDeviceType, device_id: i32) -> Self {
        Self {
            device_type,
            device_id,
        }
    }

    /// Whether the CPU may dereference memory of this device type: plain host memory,
    /// CUDA/ROCm pinned host memory and CUDA managed memory. (oneAPI shared USM is host
    /// accessible too, but the device type alone cannot tell it from device USM, so it
    /// is reported as not host accessible.)
    pub const fn is_host_accessible(self) -> bool {
        matches!(
            self.device_type,
            DLDeviceType::CPU
                | DLDeviceType::CUDA_HOST
                | DLDeviceType::ROCM_HOST
                | DLDeviceType::CUDA_MANAGED
        )
    }
}

impl core::fmt::Display for DLDevice {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.device_type.name() {
            Some(name) => write!(f, "{name}:{}", self.device_id),
            None => write!(
                f,
                "unknown device type {}:{}",
                self.device_type.0, self.device_id
            ),
        }
    }
}

impl core::fmt::Display for crate::ffi::DLDataType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let kind = match self.code.0 {
            0 => "int",
            1 => "uint",
            2 => "float",
            3 => "handle",
            4 => "bfloat",
            5 => "complex",
            6 => "bool",
            7..=14 => "float8_",
            15 | 16 => "float6_",
            17 => "float4_",
            _ => "code",
        };
        if kind.ends_with('_') || kind == "code" {
            write!(f, "{kind}{}/{}", self.code.0, self.bits)?;
        } else {
            write!(f, "{kind}{}", self.bits)?;
        }
        if self.lanes != 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}
