//! The sanitizer's settings, read once from the environment.

use std::sync::OnceLock;

use aclmem_core::Target;

use crate::report;

/// The settings, read once from the environment.
pub struct Config {
    pub(crate) halt_on_error: bool,
    /// Frames of native stack kept per call site (`ACLMEM_SANITIZER_STACKS`,
    /// 0 to 32; 0, the default of the bare library: the call site only);
    /// [`aclmem_sanitizer_stacks`](crate::abi::aclmem_sanitizer_stacks)
    /// changes it while the program runs.
    pub stack_depth: std::sync::atomic::AtomicUsize,
    /// Report every call the library refused (`ACLMEM_SANITIZER_REPORT_API_ERRORS`).
    pub(crate) report_api_errors: bool,
    /// Platforms and releases of the fleet (what a target leaves out is the
    /// running machine's).
    pub(crate) targets: Vec<Target>,
    /// What is reported as leaked (`ACLMEM_SANITIZER_LEAK_CHECK`).
    pub leak_check: LeakCheck,
}

pub use aclmem_formats::LeakCheck;

/// What the sanitizer reports as leaked at `aclFinalize` and at exit:
/// `ACLMEM_SANITIZER_LEAK_CHECK` (anything else than a setting's name:
/// the default, named on stderr). Memory a framework's caching allocator
/// still caches ([`report::FRAMEWORK_ALLOCATORS`]) is what `program`
/// leaves out.
pub(crate) fn leak_check_from_env() -> LeakCheck {
    match std::env::var("ACLMEM_SANITIZER_LEAK_CHECK").as_deref() {
        Ok("") | Err(_) => LeakCheck::default(),
        Ok(name) => LeakCheck::from_name(name).unwrap_or_else(|| {
            eprintln!(
                "aclmem-sanitizer: ACLMEM_SANITIZER_LEAK_CHECK={name}: not full, program or none; using program"
            );
            LeakCheck::default()
        }),
    }
}

/// `a2,a3@8.3,Ascend910B3@9.0,200i-a2:rc`: each entry parsed by the core's
/// [`Target`] parser (the CLI checks them with the same parser and refuses
/// a bad one before the program starts; here one that slips through is
/// named on stderr and left out).
pub(crate) fn parse_targets(text: &str) -> Vec<Target> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.parse::<Target>() {
            Ok(t) => out.push(t),
            Err(e) => eprintln!("aclmem-sanitizer: ACLMEM_SANITIZER_TARGETS: `{item}`: {e}"),
        }
    }
    out
}

/// The settings.
pub fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let flag = |k: &str| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0");
        Config {
            halt_on_error: flag("ACLMEM_SANITIZER_HALT_ON_ERROR"),
            report_api_errors: flag("ACLMEM_SANITIZER_REPORT_API_ERRORS"),
            stack_depth: std::sync::atomic::AtomicUsize::new(
                std::env::var("ACLMEM_SANITIZER_STACKS")
                    .ok()
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0)
                    .min(report::MAX_STACK),
            ),
            targets: parse_targets(&std::env::var("ACLMEM_SANITIZER_TARGETS").unwrap_or_default()),
            leak_check: leak_check_from_env(),
        }
    })
}

#[cfg(test)]
mod tests {
    use aclmem_core::{CannVersion, Product, RunMode};

    use super::*;

    #[test]
    fn targets_use_the_core_parsers() {
        // `A2` was refused here while `aclmem matrix --product A2` took it.
        let t = |product, run_mode, cann| Target {
            product,
            run_mode,
            cann,
        };
        assert_eq!(
            parse_targets("A2, atlas-a3@8.3.RC1,Ascend910B3@9.0, AtlasTraining,200i-a2:rc@8.3"),
            vec![
                t(Product::AtlasA2, None, None),
                t(Product::AtlasA3, None, Some(CannVersion::V8_3)),
                t(Product::AtlasA2, None, Some(CannVersion::V9_0)),
                t(Product::AtlasTraining, None, None),
                t(
                    Product::Atlas200IA2,
                    Some(RunMode::Rc),
                    Some(CannVersion::V8_3)
                ),
            ]
        );
        assert!(parse_targets("a2@8.3.garbage,a9,a2:xp").is_empty());
    }
}
