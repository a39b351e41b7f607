//! The viewer's frames, from the sanitizer's site texts and aclmem's own
//! notes.

use super::Frame;

/// A frame from the sanitizer's text: `function (file:line)`, or
/// `0xADDRESS in object` for code without debug information.
pub(super) fn frame(text: &str) -> Frame {
    if let Some((address, object)) = text.split_once(" in ")
        && address.starts_with("0x")
    {
        return Frame {
            filename: object.to_owned(),
            line: 0,
            name: address.to_owned(),
        };
    }
    if let Some(p) = aclmem_formats::site::parse(text) {
        return Frame {
            filename: p.file.to_owned(),
            line: u64::from(p.line),
            name: p.function.to_owned(),
        };
    }
    Frame {
        filename: "??".to_owned(),
        line: 0,
        name: text.to_owned(),
    }
}

/// A frame that is aclmem's note on a block (who exported or imported it).
pub(super) fn note(name: String) -> Frame {
    Frame {
        filename: "aclmem".to_owned(),
        line: 0,
        name,
    }
}
