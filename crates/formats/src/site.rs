//! A call site as the sanitizer names it in every file it writes:
//! `function (file:line)`, the file by its base name (a Python script's
//! line the same way).

/// The parts of a site's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place<'a> {
    /// The function that made the call (`<module>` for a script's top level).
    pub function: &'a str,
    /// The source file's base name.
    pub file: &'a str,
    /// From 1.
    pub line: u32,
}

/// Reads `function (file:line)`; `None` for any other text (an address in
/// an object, for code without debug information).
///
/// ```
/// use aclmem_formats::site::{Place, parse};
/// assert_eq!(
///     parse("load (train.py:42)"),
///     Some(Place { function: "load", file: "train.py", line: 42 })
/// );
/// assert_eq!(parse("0x1234 in libfoo.so"), None);
/// ```
pub fn parse(text: &str) -> Option<Place<'_>> {
    let (function, rest) = text.rsplit_once(" (")?;
    let (file, line) = rest.strip_suffix(')')?.rsplit_once(':')?;
    Some(Place {
        function,
        file,
        line: line.parse().ok()?,
    })
}

/// A symbol's name as a site shows it: `demangled` for a mangled name
/// (C++'s and Rust's legacy `_Z`, Rust's `_R`), the name as written for any
/// other. A C function's name is never demangled: a demangler reads `f`,
/// `i` or `St` as the C++ types `float`, `int` and `std`.
///
/// ```
/// use aclmem_formats::site::function_name;
/// assert_eq!(function_name(b"f", || "float".into()), "f");
/// assert_eq!(function_name(b"_Z4loadv", || "load()".into()), "load()");
/// ```
pub fn function_name(raw: &[u8], demangled: impl FnOnce() -> String) -> String {
    if raw.starts_with(b"_Z") || raw.starts_with(b"_R") {
        demangled()
    } else {
        String::from_utf8_lossy(raw).into_owned()
    }
}
