//! Reading the JSON-lines files the sanitizer writes (traces, sharing
//! events), with a bound on a line: a file that is not one (`/dev/zero`,
//! a binary, an endless line) is a clear error naming the file and the
//! line, never a read into memory without end.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// The longest line read: far above any record the sanitizer writes (a
/// record with its stacks is a few KiB).
pub const MAX_LINE: usize = 16 << 20;

/// The lines of a JSON-lines file, numbered from 1.
pub struct Lines {
    reader: BufReader<File>,
    path: PathBuf,
    number: usize,
    buf: Vec<u8>,
    done: bool,
}

/// Opens `path` for reading its lines.
pub fn open(path: &Path) -> Result<Lines, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Lines {
        reader: BufReader::with_capacity(1 << 20, file),
        path: path.to_owned(),
        number: 0,
        buf: Vec::new(),
        done: false,
    })
}

/// Every line of `path`, joined back with newlines (for the readers that
/// take a whole text).
pub fn read_to_string(path: &Path) -> Result<String, String> {
    let mut text = String::new();
    for line in open(path)? {
        let (_, line) = line?;
        text.push_str(&line);
        text.push('\n');
    }
    Ok(text)
}

impl Lines {
    /// The next line, borrowed until the next call (no allocation per
    /// line, for readers of large traces); `None` at the end.
    pub fn next_str(&mut self) -> Option<Result<(usize, &str), String>> {
        if self.done {
            return None;
        }
        self.buf.clear();
        self.number += 1;
        let limit = MAX_LINE as u64 + 1;
        let read = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.buf);
        let at = |this: &Lines| format!("{}:{}", this.path.display(), this.number);
        let fail = |this: &mut Lines, why: String| {
            this.done = true;
            Some(Err(why))
        };
        match read {
            Err(e) => {
                let why = format!("{}: {e}", at(self));
                fail(self, why)
            }
            Ok(0) => {
                self.done = true;
                None
            }
            Ok(_) if self.buf.len() > MAX_LINE => {
                let why = format!(
                    "{}: a line longer than {} MiB: not a file the sanitizer wrote",
                    at(self),
                    MAX_LINE >> 20
                );
                fail(self, why)
            }
            Ok(_) => {
                if self.buf.last() == Some(&b'\n') {
                    self.buf.pop();
                }
                // Disjoint fields: the line borrowed, the flag set.
                let Lines {
                    buf,
                    done,
                    path,
                    number,
                    ..
                } = self;
                match std::str::from_utf8(buf) {
                    Ok(s) => Some(Ok((*number, s))),
                    Err(_) => {
                        *done = true;
                        Some(Err(format!(
                            "{}:{number}: not UTF-8 text: not a file the sanitizer wrote",
                            path.display()
                        )))
                    }
                }
            }
        }
    }
}

impl Iterator for Lines {
    type Item = Result<(usize, String), String>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_str()
            .map(|line| line.map(|(n, s)| (n, s.to_owned())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of this test process's own.
    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("aclmem-jsonl-{}-{name}", std::process::id()))
    }

    #[test]
    fn lines_are_numbered_and_the_last_needs_no_newline() {
        let p = scratch("t.jsonl");
        std::fs::write(&p, "{\"a\":1}\n\n{\"b\":2}").unwrap();
        let lines: Vec<_> = open(&p).unwrap().map(Result::unwrap).collect();
        assert_eq!(
            lines,
            [
                (1, "{\"a\":1}".to_owned()),
                (2, String::new()),
                (3, "{\"b\":2}".to_owned())
            ]
        );
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn an_endless_line_is_an_error_not_a_read_without_end() {
        let e = open(Path::new("/dev/zero"))
            .unwrap()
            .find_map(Result::err)
            .expect("an error");
        assert!(e.contains("/dev/zero:1: a line longer than 16 MiB"), "{e}");
    }

    #[test]
    fn binary_is_an_error_naming_the_line() {
        let p = scratch("b");
        std::fs::write(&p, b"{}\n\xff\xfe\n").unwrap();
        let e = read_to_string(&p).unwrap_err();
        std::fs::remove_file(&p).unwrap();
        assert!(
            e.ends_with("-b:2: not UTF-8 text: not a file the sanitizer wrote"),
            "{e}"
        );
    }
}
