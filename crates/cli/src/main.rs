//! `aclmem`: the Ascend physical-memory support matrix and run-time checks.

use std::process::ExitCode;

use aclmem_core::{Location, MemAttr, Product, RunMode, check};
use clap::{Parser, Subcommand, ValueEnum};

mod matrix;

#[derive(Parser)]
#[command(
    name = "aclmem",
    version,
    about = "Ascend physical-memory rules, checked"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the support matrix (product x run mode x location x attribute).
    Matrix {
        /// Only this product (atlas350, a3, a2, training, inference, 200i-a2, 200-300-500).
        #[arg(long, value_parser = parse_product)]
        product: Option<Product>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Check one combination, as code that learns its product at run time does.
    Check {
        /// The SoC name `aclrtGetSocName` returns (e.g. Ascend910B3).
        #[arg(long)]
        soc: String,
        /// Run mode: ep (ACL_HOST) or rc (ACL_DEVICE).
        #[arg(long, value_enum, default_value_t = Mode::Ep)]
        run_mode: Mode,
        /// Location: device, host or host-numa.
        #[arg(long, value_parser = parse_location)]
        location: Location,
        /// Attribute: C name (ACL_HBM_MEM_HUGE) or raw value (4).
        #[arg(long, value_parser = parse_attr)]
        attr: MemAttr,
    },
    /// Load libascendcl.so, initialise ACL and report what it runs on.
    Probe {
        /// The library (a file or a directory); otherwise the documented
        /// search path: $ACLMEM_ASCENDCL, $ASCEND_HOME_PATH/lib64,
        /// $ASCEND_TOOLKIT_HOME/lib64, /usr/local/Ascend/ascend-toolkit/latest/lib64,
        /// then the dynamic loader.
        #[arg(long)]
        lib: Option<std::path::PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
    Markdown,
}

#[derive(Clone, Copy, ValueEnum)]
enum Mode {
    Ep,
    Rc,
}

fn parse_product(s: &str) -> Result<Product, String> {
    Product::from_id(s).ok_or_else(|| {
        let ids: Vec<_> = Product::ALL.iter().map(|p| p.id()).collect();
        format!("unknown product `{s}`; expected one of {}", ids.join(", "))
    })
}

fn parse_location(s: &str) -> Result<Location, String> {
    Location::ALL
        .into_iter()
        .find(|l| l.id() == s)
        .ok_or_else(|| format!("unknown location `{s}`; expected device, host or host-numa"))
}

fn parse_attr(s: &str) -> Result<MemAttr, String> {
    let by_value = s.parse::<u32>().ok().and_then(MemAttr::from_raw);
    by_value
        .or_else(|| {
            MemAttr::ALL
                .iter()
                .copied()
                .find(|a| a.c_name().eq_ignore_ascii_case(s))
        })
        .ok_or_else(|| format!("unknown memory attribute `{s}`"))
}

fn probe(lib: Option<&std::path::Path>) -> Result<(), String> {
    use aclmem_driver::{AscendCl, Policy, SYMBOLS};
    let cl = AscendCl::load(lib).map_err(|e| e.to_string())?;
    println!("library:  {}", cl.path());
    let runtime = cl.init().map_err(|e| format!("aclInit failed: {e}"))?;
    let soc = runtime
        .soc_name()
        .map_err(|e| format!("aclrtGetSocName failed: {e}"))?;
    let run_mode = runtime
        .run_mode()
        .map_err(|e| format!("aclrtGetRunMode failed: {e}"))?;
    match Product::from_soc_name(&soc) {
        Ok(product) => println!("SoC:      {soc} ({product}, {run_mode} form)"),
        Err(_) => println!("SoC:      {soc} (unknown to aclmem, {run_mode} form)"),
    }
    let devices = runtime
        .device_count()
        .map_err(|e| format!("aclrtGetDeviceCount failed: {e}"))?;
    println!("devices:  {devices}");
    if devices > 0 {
        let device = runtime
            .device(0)
            .map_err(|e| format!("aclrtSetDevice(0) failed: {e}"))?;
        match device.mem_info(MemAttr::HbmMem) {
            Ok((free, total)) => println!("device 0: {free} of {total} bytes free (ACL_HBM_MEM)"),
            Err(e) => println!("device 0: aclrtGetMemInfo failed: {e}"),
        }
    }
    let missing: Vec<&str> = SYMBOLS
        .iter()
        .filter(|(name, policy)| *policy == Policy::Optional && !cl.has_symbol(name))
        .map(|(name, _)| *name)
        .collect();
    if missing.is_empty() {
        println!("optional: all present");
    } else {
        println!(
            "optional: missing {} (those calls answer 207000)",
            missing.join(", ")
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Probe { lib } => match probe(lib.as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Matrix { product, format } => {
            let rows = matrix::rows(product);
            let text = match format {
                Format::Table => matrix::table(&rows),
                Format::Json => matrix::json(&rows),
                Format::Markdown => matrix::markdown(&rows),
            };
            print!("{text}");
            ExitCode::SUCCESS
        }
        Command::Check {
            soc,
            run_mode,
            location,
            attr,
        } => {
            let product = match Product::from_soc_name(&soc) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("error: {e} `{soc}` ({})", e.code());
                    return ExitCode::from(2);
                }
            };
            let run_mode = match run_mode {
                Mode::Ep => RunMode::Ep,
                Mode::Rc => RunMode::Rc,
            };
            match check(product, run_mode, location, attr) {
                Ok(verdict) => {
                    println!("{soc} ({product}, {run_mode}): {attr} at {location}: {verdict}");
                    ExitCode::SUCCESS
                }
                Err(denial) => {
                    println!(
                        "{soc} ({product}, {run_mode}): {attr} at {location}: refused: {denial}"
                    );
                    ExitCode::FAILURE
                }
            }
        }
    }
}
