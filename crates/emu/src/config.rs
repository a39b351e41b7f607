//! The emulated machine's configuration, its presets, and the `ACLMEM_EMU_*`
//! environment every emulated process reads.

use core::fmt;

use aclmem_core::{AclError, CannVersion, GIB, Product, RunMode};

/// The most devices an emulated machine has (the largest real server has
/// 16; the limit bounds the machine's shared state).
pub const MAX_DEVICES: u32 = 64;

/// How an emulated machine is built.
///
/// Start from a preset ([`EmuConfig::preset`] or [`EmuConfig::from_soc`])
/// and adjust fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmuConfig {
    /// What `aclrtGetSocName` answers; it decides the product.
    pub soc_name: String,
    /// EP (`ACL_HOST`) or RC (`ACL_DEVICE`).
    pub run_mode: RunMode,
    /// The CANN release whose rules, granularity answers, reservation
    /// rules and version queries the machine emulates.
    pub cann: CannVersion,
    /// Number of devices (1 to [`MAX_DEVICES`]).
    pub devices: u32,
    /// Device memory per device in bytes (HBM, or DDR on products without
    /// HBM).
    pub device_memory: usize,
    /// Host DDR available to `aclrtMallocPhysical`, shared by plain host and
    /// host-NUMA allocations.
    pub host_memory: usize,
    /// Number of host NUMA nodes (valid NUMA ids are `0..numa_nodes`).
    pub numa_nodes: u32,
    /// Pre-allocated 1 GiB page pool per device (a part of device memory).
    pub huge1g_pool: usize,
    /// Whether the device confirms `ACL_MEM_P2P_HUGE1G` (rules verdict
    /// "allowed if the device confirms"); when `false` such requests answer
    /// 207000.
    pub p2p_huge1g_confirmed: bool,
    /// Largest host-NUMA P2P allocation the platform allows (rules verdict
    /// "size limited by the platform"); larger requests answer 207001.
    pub host_numa_p2p_limit: usize,
}

/// The SoC name of each product's preset.
pub const fn preset_soc(product: Product) -> &'static str {
    match product {
        Product::Atlas350 => "Ascend950PR_9599",
        Product::AtlasA3 => "Ascend910_9392",
        Product::AtlasA2 => "Ascend910B3",
        Product::AtlasTraining => "Ascend910A",
        Product::AtlasInference => "Ascend310P3",
        Product::Atlas200IA2 => "Ascend310B1",
        Product::Atlas200_300_500 => "Ascend310",
    }
}

impl EmuConfig {
    /// A typical machine of `product` in EP form (change `run_mode` for RC).
    pub fn preset(product: Product) -> EmuConfig {
        let (devices, device_memory, huge1g_pool) = match product {
            Product::Atlas350 => (8, 112 * GIB, 16 * GIB),
            Product::AtlasA3 => (16, 64 * GIB, 16 * GIB),
            Product::AtlasA2 => (8, 64 * GIB, 16 * GIB),
            Product::AtlasTraining => (8, 32 * GIB, 0),
            Product::AtlasInference => (4, 24 * GIB, 0),
            Product::Atlas200IA2 => (1, 8 * GIB, 0),
            Product::Atlas200_300_500 => (1, 8 * GIB, 0),
        };
        EmuConfig {
            soc_name: preset_soc(product).to_owned(),
            run_mode: RunMode::Ep,
            cann: CannVersion::DEFAULT,
            devices,
            device_memory,
            host_memory: 64 * GIB,
            numa_nodes: 2,
            huge1g_pool,
            p2p_huge1g_confirmed: true,
            host_numa_p2p_limit: 32 * GIB,
        }
    }

    /// The preset of the product `soc_name` belongs to, with that SoC name.
    pub fn from_soc(soc_name: &str) -> Result<EmuConfig, AclError> {
        let product = Product::from_soc_name(soc_name).map_err(|e| e.code())?;
        Ok(EmuConfig {
            soc_name: soc_name.to_owned(),
            ..EmuConfig::preset(product)
        })
    }

    /// The product the SoC name belongs to.
    pub fn product(&self) -> Result<Product, AclError> {
        Product::from_soc_name(&self.soc_name).map_err(|e| e.code())
    }

    /// Checks the fields: a known SoC name, 1 to [`MAX_DEVICES`] devices,
    /// device memory and host memory above zero.
    pub fn validate(&self) -> Result<Product, ConfigError> {
        let product = self.product().map_err(|_| ConfigError {
            variable: "ACLMEM_EMU_SOC",
            value: self.soc_name.clone(),
            expected: "a known Ascend SoC name, such as Ascend910B3",
        })?;
        if !(1..=MAX_DEVICES).contains(&self.devices) {
            return Err(ConfigError {
                variable: "ACLMEM_EMU_DEVICES",
                value: self.devices.to_string(),
                expected: "a device count from 1 to 64",
            });
        }
        if self.device_memory == 0 {
            return Err(ConfigError {
                variable: "ACLMEM_EMU_HBM",
                value: "0".into(),
                expected: "a size above zero, such as 64GiB",
            });
        }
        if self.host_memory == 0 {
            return Err(ConfigError {
                variable: "ACLMEM_EMU_HOST",
                value: "0".into(),
                expected: "a size above zero, such as 64GiB",
            });
        }
        Ok(product)
    }

    /// The configuration the environment describes, starting from the
    /// preset of `ACLMEM_EMU_SOC` (default `Ascend910B3`, 8 devices of 64 GiB):
    ///
    /// | variable | meaning | default |
    /// |---|---|---|
    /// | `ACLMEM_EMU_SOC` | what `aclrtGetSocName` answers (decides the product) | `Ascend910B3` |
    /// | `ACLMEM_EMU_DEVICES` | device count, 1 to 64 | `8` |
    /// | `ACLMEM_EMU_HBM` | device memory per device (`64GiB`, `512MiB`, bytes) | `64GiB` |
    /// | `ACLMEM_EMU_HOST` | host memory for `aclrtMallocPhysical` | `64GiB` |
    /// | `ACLMEM_EMU_RUN_MODE` | `host` (EP, `ACL_HOST`) or `device` (RC, `ACL_DEVICE`); `ep` or `rc` too, any case | `host` |
    /// | `ACLMEM_EMU_CANN` | the CANN release emulated (`8.0` … `9.1`, `8.3.RC1` style) | `9.0` |
    ///
    /// `get` reads one variable (`std::env::var` in a program; a map in
    /// tests and the fuzzer). An empty value counts as unset.
    pub fn from_env_with(get: impl Fn(&str) -> Option<String>) -> Result<EmuConfig, ConfigError> {
        let var = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let bad = |variable: &'static str, value: &str, expected: &'static str| ConfigError {
            variable,
            value: value.to_owned(),
            expected,
        };
        let soc = var("ACLMEM_EMU_SOC").unwrap_or_else(|| "Ascend910B3".into());
        let mut config = EmuConfig::from_soc(soc.trim()).map_err(|_| {
            bad(
                "ACLMEM_EMU_SOC",
                &soc,
                "a known Ascend SoC name, such as Ascend910B3",
            )
        })?;
        config.devices = 8;
        config.device_memory = 64 * GIB;
        if let Some(v) = var("ACLMEM_EMU_DEVICES") {
            config.devices = v
                .trim()
                .parse()
                .ok()
                .filter(|n| (1..=MAX_DEVICES).contains(n))
                .ok_or_else(|| bad("ACLMEM_EMU_DEVICES", &v, "a device count from 1 to 64"))?;
        }
        if let Some(v) = var("ACLMEM_EMU_HBM") {
            config.device_memory = parse_size(&v)
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| bad("ACLMEM_EMU_HBM", &v, "a size above zero, such as 64GiB"))?;
        }
        if let Some(v) = var("ACLMEM_EMU_HOST") {
            config.host_memory = parse_size(&v)
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| bad("ACLMEM_EMU_HOST", &v, "a size above zero, such as 64GiB"))?;
        }
        if let Some(v) = var("ACLMEM_EMU_RUN_MODE") {
            config.run_mode = v.trim().parse::<RunMode>().map_err(|_| {
                bad(
                    "ACLMEM_EMU_RUN_MODE",
                    &v,
                    "`host` (EP) or `device` (RC), or `ep` or `rc`",
                )
            })?;
        }
        if let Some(v) = var("ACLMEM_EMU_CANN") {
            config.cann = v
                .parse::<CannVersion>()
                .map_err(|_| bad("ACLMEM_EMU_CANN", &v, CannVersion::EXPECTED))?;
        }
        config.validate()?;
        Ok(config)
    }

    /// [`EmuConfig::from_env_with`] over the process environment.
    pub fn from_env() -> Result<EmuConfig, ConfigError> {
        EmuConfig::from_env_with(|name| std::env::var(name).ok())
    }
}

impl fmt::Display for EmuConfig {
    /// One line naming everything two processes must agree on.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}), {} device(s) of {}, {} of host memory, {}, {} form",
            self.soc_name,
            self.product().map_or("unknown product", |p| p.doc_name()),
            self.devices,
            Bytes(self.device_memory),
            Bytes(self.host_memory),
            self.cann,
            self.run_mode
        )
    }
}

/// A size as the environment writes it: `64 GiB` when it is a whole
/// number of GiB (or MiB, KiB), else bytes.
struct Bytes(usize);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        match [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")]
            .into_iter()
            .find(|&(shift, _)| n != 0 && n.trailing_zeros() >= shift)
        {
            Some((shift, unit)) => write!(f, "{} {unit}", n >> shift),
            None => write!(f, "{n} bytes"),
        }
    }
}

/// A configuration value the emulator cannot use; `aclInit` reports it on
/// stderr and answers `ACL_ERROR_INVALID_PARAM` (100000).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The environment variable.
    pub variable: &'static str,
    /// Its value.
    pub value: String,
    /// What would have been accepted.
    pub expected: &'static str,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}=`{}` is not {}",
            self.variable, self.value, self.expected
        )
    }
}

impl std::error::Error for ConfigError {}

/// A size that failed to parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseSizeError(pub String);

impl fmt::Display for ParseSizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid size `{}`: expected bytes or a number with a unit (KiB, MiB, GiB, TiB, K, M, G, T)",
            self.0
        )
    }
}

impl std::error::Error for ParseSizeError {}

/// Parses `"68719476736"`, `"64GiB"`, `"64G"`, `"512 MiB"`; units are binary.
pub fn parse_size(text: &str) -> Result<usize, ParseSizeError> {
    let err = || ParseSizeError(text.to_owned());
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: usize = digits.parse().map_err(|_| err())?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        "t" | "tib" | "tb" => 40,
        _ => return Err(err()),
    };
    n.checked_mul(1usize << shift).ok_or_else(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_the_environment_writes_them() {
        let shown: Vec<String> = [64 << 30, 1536 << 20, 1 << 40, 4096, 100, 0]
            .into_iter()
            .map(|n| Bytes(n).to_string())
            .collect();
        assert_eq!(
            shown,
            [
                "64 GiB",
                "1536 MiB",
                "1 TiB",
                "4 KiB",
                "100 bytes",
                "0 bytes"
            ]
        );
    }
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> Result<EmuConfig, ConfigError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        EmuConfig::from_env_with(|k| map.get(k).cloned())
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("64GiB"), Ok(64 * GIB));
        assert_eq!(parse_size("64G"), Ok(64 * GIB));
        assert_eq!(parse_size(" 512 MiB "), Ok(512 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("").is_err());
        assert!(parse_size("GiB").is_err());
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("99999999999TiB").is_err());
        assert!(parse_size("-1").is_err());
    }

    #[test]
    fn presets_follow_the_soc_name() {
        let c = EmuConfig::from_soc("Ascend310P1").unwrap();
        assert_eq!(c.product(), Ok(Product::AtlasInference));
        assert_eq!(c.soc_name, "Ascend310P1");
        assert!(EmuConfig::from_soc("Ascend999").is_err());
        for p in Product::ALL {
            assert_eq!(EmuConfig::preset(p).product(), Ok(p));
        }
    }

    #[test]
    fn the_environment_is_read_and_bad_values_are_named() {
        let c = env(&[]).unwrap();
        assert_eq!(
            (c.soc_name.as_str(), c.devices, c.device_memory),
            ("Ascend910B3", 8, 64 * GIB)
        );
        let c = env(&[
            ("ACLMEM_EMU_SOC", "Ascend910_9382"),
            ("ACLMEM_EMU_DEVICES", "2"),
            ("ACLMEM_EMU_HBM", "256MiB"),
            ("ACLMEM_EMU_CANN", "8.3.RC1"),
            ("ACLMEM_EMU_RUN_MODE", "host"),
        ])
        .unwrap();
        assert_eq!(c.product(), Ok(Product::AtlasA3));
        assert_eq!(
            (c.devices, c.device_memory, c.cann),
            (2, 256 << 20, CannVersion::V8_3)
        );
        for (k, bad) in [
            ("ACLMEM_EMU_SOC", "Ascend999"),
            ("ACLMEM_EMU_DEVICES", "0"),
            ("ACLMEM_EMU_DEVICES", "65"),
            ("ACLMEM_EMU_DEVICES", "eight"),
            ("ACLMEM_EMU_HBM", "lots"),
            ("ACLMEM_EMU_HBM", "0"),
            ("ACLMEM_EMU_HOST", "0"),
            ("ACLMEM_EMU_RUN_MODE", "sideways"),
            ("ACLMEM_EMU_CANN", "8.4"),
        ] {
            let e = env(&[(k, bad)]).unwrap_err();
            assert_eq!(e.variable, k);
            assert!(
                e.to_string().starts_with(&format!("{k}=`{bad}` is not ")),
                "{e}"
            );
        }
    }
}
