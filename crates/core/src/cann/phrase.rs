//! Text built at compile time from the table of releases (the lists in
//! diagnostics and errors).

use super::CannVersion;

/// Text built at compile time from the table.
pub(super) struct Phrase {
    buf: [u8; 256],
    len: usize,
}

impl Phrase {
    /// `prefix`, then the ids separated by `, ` and `last` before the last.
    pub(super) const fn ids(prefix: &str, last: &str) -> Phrase {
        let mut p = Phrase {
            buf: [0; 256],
            len: 0,
        };
        p = p.push(prefix);
        let mut i = 0;
        while i < CannVersion::COUNT {
            if i + 1 == CannVersion::COUNT && i > 0 {
                p = p.push(last);
            } else if i > 0 {
                p = p.push(", ");
            }
            p = p.push(CannVersion::ALL[i].id());
            i += 1;
        }
        p
    }

    const fn push(mut self, s: &str) -> Phrase {
        let bytes = s.as_bytes();
        let mut j = 0;
        while j < bytes.len() {
            self.buf[self.len] = bytes[j];
            self.len += 1;
            j += 1;
        }
        self
    }

    pub(super) const fn as_str(&'static self) -> &'static str {
        match core::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(text) => text,
            Err(_) => panic!("the phrase is built from strings"),
        }
    }
}
