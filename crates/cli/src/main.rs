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

fn main() -> ExitCode {
    match Cli::parse().command {
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
