//! The support matrix, generated from the rules table: the cells of a
//! release, the text table `aclmem matrix` prints and the markdown of
//! `docs/rules.md`. Written to any formatter, without allocating, so that
//! this crate's own tests see what a new row of a table changes.

use core::fmt;

use crate::attr::MemAttr;
use crate::cann::CannVersion;
use crate::location::Location;
use crate::product::Product;
use crate::report::Checked;
use crate::rules::{Denial, PLATFORMS, Platform, Verdict};
use crate::text::Buf;

/// Every platform × location × allocatable attribute of one release,
/// optionally of one product only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Matrix {
    /// The release.
    pub cann: CannVersion,
    /// Only this product's platforms (`None`: all).
    pub product: Option<Product>,
}

impl Matrix {
    /// The whole matrix of `cann`.
    pub const fn of(cann: CannVersion) -> Matrix {
        Matrix {
            cann,
            product: None,
        }
    }

    /// The platforms shown, in table order.
    pub fn platforms(&self) -> impl Iterator<Item = &'static Platform> + '_ {
        PLATFORMS
            .iter()
            .filter(|p| self.product.is_none_or(|want| p.product == want))
    }

    /// The cells of one platform: locations across, attributes down.
    pub fn grid(&self, platform: &Platform) -> impl Iterator<Item = Checked> + use<> {
        let (cann, platform) = (self.cann, *platform);
        Location::ALL.into_iter().flat_map(move |location| {
            MemAttr::ALLOCATABLE.into_iter().map(move |attr| {
                Checked::new(platform.product, platform.run_mode, cann, location, attr)
            })
        })
    }

    /// Every cell, platform by platform.
    pub fn cells(&self) -> impl Iterator<Item = Checked> + '_ {
        self.platforms().flat_map(|p| self.grid(p))
    }

    /// The text table `aclmem matrix` prints.
    pub const fn table(self) -> Table {
        Table(self)
    }
}

/// A cell in a few characters: `yes`, `yes [1]`, `no (100000)`,
/// `no (100000, from 8.5)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell(pub Result<Verdict, Denial>);

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Written whole first, so that width and alignment apply to it.
        let mut buf = Buf::<32>::new();
        let _ = match self.0 {
            Ok(Verdict::Allowed) => fmt::write(&mut buf, format_args!("yes")),
            Ok(Verdict::AllowedIfDeviceConfirms) => fmt::write(&mut buf, format_args!("yes [1]")),
            Ok(Verdict::SizeLimitedByPlatform) => fmt::write(&mut buf, format_args!("yes [2]")),
            Err(d) => match d.since() {
                Some(since) => fmt::write(
                    &mut buf,
                    format_args!("no ({}, from {})", d.code().code(), since.id()),
                ),
                None => fmt::write(&mut buf, format_args!("no ({})", d.code().code())),
            },
        };
        f.pad(buf.as_str())
    }
}

/// The text table of a [`Matrix`]: a grid per platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table(Matrix);

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let matrix = self.0;
        writeln!(f, "{} rules\n", matrix.cann)?;
        for platform in matrix.platforms() {
            writeln!(
                f,
                "{} ({}, {} form)",
                platform.marker,
                platform.product.doc_name(),
                platform.run_mode
            )?;
            write!(f, "  {:<24}", "attribute")?;
            for location in Location::ALL {
                write!(f, " {:<20}", location.id())?;
            }
            writeln!(f)?;
            for attr in MemAttr::ALLOCATABLE {
                write!(f, "  {:<24}", attr.c_name())?;
                for location in Location::ALL {
                    let cell = Checked::new(
                        platform.product,
                        platform.run_mode,
                        matrix.cann,
                        location,
                        attr,
                    );
                    write!(f, " {:<20}", Cell(cell.result))?;
                }
                writeln!(f)?;
            }
            writeln!(f)?;
        }
        f.write_str(LEGEND)
    }
}

const LEGEND: &str = "\
[1] allowed only where the device confirms the feature; otherwise 207000 at allocation time
[2] allowed; the largest size depends on the server model and BIOS
no (100000) = ACL_ERROR_INVALID_PARAM, no (207000) = ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
\"from 8.5\": refused by this release, allowed from that release on
";

/// `docs/rules.md`: one table per release, newest first (attribute ×
/// location down, platforms across).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Markdown;

impl fmt::Display for Markdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "<!-- Generated by `cargo run -p aclmem-cli -- matrix --format markdown`; \
             do not edit. `cargo xtask docs` regenerates it and `cargo xtask ci` checks it. -->\n\
             # aclmem support matrix\n\n\
             Which memory attribute `aclrtMallocPhysical` accepts at which location on which Ascend \
             product, in each CANN release aclmem models, generated from the single rules table in \
             `crates/core/src/rules/mod.rs`. The same table makes a refused combination a compile error \
             and drives the run-time `aclmem_core::check`. The facts and their sources are in \
             `docs/facts.md`.\n\n\
             - **yes**: allowed.\n\
             - **yes [1]**: allowed only where the device confirms the feature; otherwise the runtime \
             answers 207000 at allocation time.\n\
             - **yes [2]**: allowed; the largest size depends on the server model and BIOS.\n\
             - **no (code)**: refused, with the ACL error the runtime returns: 100000 \
             `ACL_ERROR_INVALID_PARAM`, 207000 `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`; \
             **no (code, from 8.5)**: this release refuses it, 8.5 and later allow it.\n\n\
             Granularity: 2 MiB for every attribute except the `*_HUGE1G` ones (1 GiB). \
             `aclmem matrix --cann 8.3` prints one release; `aclmem diff 8.3 9.0` lists what \
             changed between two.\n\n\
             Releases: ",
        )?;
        for (i, v) in CannVersion::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{} = {}", v.id(), v.covers())?;
        }
        f.write_str(".\n\n")?;
        for cann in CannVersion::ALL.into_iter().rev() {
            writeln!(f, "## {cann}\n")?;
            f.write_str("| location | attribute |")?;
            for p in PLATFORMS {
                write!(f, " `{}` |", p.marker)?;
            }
            f.write_str("\n|---|---|")?;
            for _ in PLATFORMS {
                f.write_str("---|")?;
            }
            f.write_str("\n")?;
            for location in Location::ALL {
                for attr in MemAttr::ALLOCATABLE {
                    write!(f, "| {} | `{}` |", location.id(), attr.c_name())?;
                    for p in PLATFORMS {
                        let cell = Checked::new(p.product, p.run_mode, cann, location, attr);
                        write!(f, " {} |", Cell(cell.result))?;
                    }
                    f.write_str("\n")?;
                }
            }
            f.write_str("\n")?;
        }
        f.write_str("## Values refused everywhere\n\n")?;
        let refused = MemAttr::ALL.iter().filter(|a| !a.is_allocatable());
        let count = refused.clone().count();
        for (i, a) in refused.enumerate() {
            let sep = match i {
                0 => "",
                _ if i + 1 == count => " and ",
                _ => ", ",
            };
            write!(f, "{sep}`{}` ({})", a.c_name(), a.raw())?;
        }
        f.write_str(" have no marker type; `aclrtMallocPhysical` answers them with 100000.\n")
    }
}
