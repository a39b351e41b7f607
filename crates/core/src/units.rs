//! Units of size, shared by the page classes and the aligned sizes.

/// One mebibyte.
pub const MIB: usize = 1 << 20;
/// One gibibyte.
pub const GIB: usize = 1 << 30;
