//! The emulated machine's configuration and presets.

use core::fmt;

use aclmem_core::{AclError, CannVersion, GIB, Product, RunMode};

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
    /// Number of devices.
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
}

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
}
