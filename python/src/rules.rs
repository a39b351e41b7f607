//! The rules as Python values: a verdict for a combination, the matrix of a
//! release, the constants and the releases the table holds.

use aclmem_core::{AclError, CannVersion, Checked, Location, MemAttr, Product, RunMode};
use aclmem_sys as sys;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// A product by the core parser (id `a2`, marker `AtlasA2`, the
/// documentation's name; case and punctuation ignored) or SoC name
/// (`Ascend910B3`).
pub(crate) fn parse_product(text: &str) -> PyResult<Product> {
    text.parse::<Product>().or_else(|e| {
        Product::from_soc_name(text).map_err(|_| {
            PyValueError::new_err(format!("`{text}` is neither a product nor a SoC name: {e}"))
        })
    })
}

/// The core parsers (`FromStr`), with their messages.
pub(crate) fn parse<T: std::str::FromStr>(text: &str) -> PyResult<T>
where
    T::Err: std::fmt::Display,
{
    text.parse()
        .map_err(|e: T::Err| PyValueError::new_err(format!("`{text}`: {e}")))
}

pub(crate) fn parse_attr(attr: &Bound<'_, PyAny>) -> PyResult<MemAttr> {
    if let Ok(raw) = attr.extract::<u32>() {
        return MemAttr::from_raw(raw)
            .ok_or_else(|| PyValueError::new_err(format!("no memAttr has the value {raw}")));
    }
    parse(&attr.extract::<String>()?)
}

pub(crate) fn parse_cann(cann: Option<&str>) -> PyResult<CannVersion> {
    cann.map_or(Ok(CannVersion::DEFAULT), parse)
}

/// The verdict of the rules table as a dict: the core's `CheckReport`
/// (the same keys and formats as `aclmem matrix --format json`).
pub(crate) fn verdict_dict<'py>(
    py: Python<'py>,
    product: Product,
    run_mode: RunMode,
    cann: CannVersion,
    location: Location,
    attr: MemAttr,
) -> PyResult<Bound<'py, PyDict>> {
    let report = Checked::new(product, run_mode, cann, location, attr).report();
    let serde_json::Value::Object(fields) =
        serde_json::to_value(report).map_err(|e| PyValueError::new_err(e.to_string()))?
    else {
        return Err(PyRuntimeError::new_err(
            "aclmem: a verdict did not serialise to an object",
        ));
    };
    let d = PyDict::new(py);
    for (key, value) in fields {
        match value {
            serde_json::Value::Null => d.set_item(key, py.None())?,
            serde_json::Value::Bool(b) => d.set_item(key, b)?,
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => d.set_item(key, i)?,
                None => d.set_item(key, n.as_u64())?,
            },
            serde_json::Value::String(text) => d.set_item(key, text)?,
            other => {
                return Err(PyRuntimeError::new_err(format!(
                    "aclmem: a verdict field `{key}` is not flat: {other}"
                )));
            }
        }
    }
    Ok(d)
}

/// `check(product_or_soc, location, attr, cann=None, run_mode="ep")`.
#[pyfunction]
#[pyo3(signature = (product_or_soc, location, attr, cann=None, run_mode="ep"))]
pub(crate) fn check<'py>(
    py: Python<'py>,
    product_or_soc: &str,
    location: &str,
    attr: &Bound<'py, PyAny>,
    cann: Option<&str>,
    run_mode: &str,
) -> PyResult<Bound<'py, PyDict>> {
    verdict_dict(
        py,
        parse_product(product_or_soc)?,
        parse::<RunMode>(run_mode)?,
        parse_cann(cann)?,
        parse::<Location>(location)?,
        parse_attr(attr)?,
    )
}

/// `matrix(cann=None)`: every platform (product × run mode) × location × allocatable
/// attribute, as verdict dicts.
#[pyfunction]
#[pyo3(signature = (cann=None))]
pub(crate) fn matrix<'py>(py: Python<'py>, cann: Option<&str>) -> PyResult<Bound<'py, PyList>> {
    let cann = parse_cann(cann)?;
    let rows = PyList::empty(py);
    for platform in aclmem_core::PLATFORMS {
        for location in Location::ALL {
            for attr in MemAttr::ALLOCATABLE {
                rows.append(verdict_dict(
                    py,
                    platform.product,
                    platform.run_mode,
                    cann,
                    location,
                    attr,
                )?)?;
            }
        }
    }
    Ok(rows)
}

/// The names and values of the C enums, from the Rust tables.
#[pyfunction]
pub(crate) fn constants<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for attr in MemAttr::ALL {
        d.set_item(attr.c_name(), attr.raw())?;
    }
    for location in Location::ALL {
        d.set_item(location.c_name(), location.raw())?;
    }
    d.set_item(
        "ACL_MEM_LOCATION_TYPE_UNREGISTERED",
        sys::ACL_MEM_LOCATION_TYPE_UNREGISTERED,
    )?;
    for e in AclError::KNOWN {
        if let Some(name) = e.name() {
            d.set_item(name, e.code())?;
        }
    }
    d.set_item("ACL_SUCCESS", 0)?;
    Ok(d)
}

/// The releases whose rules the table holds, oldest first.
#[pyfunction]
pub(crate) fn cann_releases() -> Vec<&'static str> {
    CannVersion::ALL.iter().map(|c| c.release()).collect()
}
