//! Reading a pickle of plain data (dicts, lists, tuples, strings, numbers,
//! `None`, booleans) into JSON values, as Python's `pickle.load` sees it.
//!
//! Why not `serde-pickle`, which writes the project's pickles: its reader
//! (1.2.0) counts memo references per occurrence in the stream, so a
//! container memoized once and referenced twice whose items are memoized
//! too fails with "recursive structure found" (or loses those items to
//! `None` with `replace_recursive_structures`). torch's memory snapshots
//! are exactly that: one frame list shared by a block and its trace
//! events. This reader keeps every object once, in an arena, and the memo
//! and the stack refer to them, as Python's objects do.

use serde_json::{Map, Value};

/// An object: a leaf, or a container of other objects (by index).
enum Object {
    Leaf(Value),
    List(Vec<usize>),
    Dict(Vec<(usize, usize)>),
}

/// The deepest nesting converted (a cycle, which plain data cannot have,
/// ends there with an error).
const MAX_DEPTH: usize = 512;
/// The most values converted: shared objects are copied at each
/// reference, so a small hostile pickle could otherwise expand without
/// bound (a list holding itself twice, nested).
const MAX_VALUES: usize = 1 << 26;

struct Machine {
    objects: Vec<Object>,
    stack: Vec<usize>,
    marks: Vec<usize>,
    memo: std::collections::HashMap<u64, usize>,
}

fn err(what: impl std::fmt::Display, at: usize) -> String {
    format!("pickle: {what} at byte {at}")
}

impl Machine {
    fn push(&mut self, o: Object) {
        self.objects.push(o);
        self.stack.push(self.objects.len() - 1);
    }

    fn pop(&mut self, at: usize) -> Result<usize, String> {
        self.stack.pop().ok_or_else(|| err("stack underflow", at))
    }

    fn pop_mark(&mut self, at: usize) -> Result<Vec<usize>, String> {
        let mark = self.marks.pop().ok_or_else(|| err("no mark", at))?;
        if mark > self.stack.len() {
            return Err(err("mark above the stack", at));
        }
        Ok(self.stack.split_off(mark))
    }

    fn top(&self, at: usize) -> Result<usize, String> {
        self.stack
            .last()
            .copied()
            .ok_or_else(|| err("stack underflow", at))
    }

    fn extend(&mut self, target: usize, items: Vec<usize>, at: usize) -> Result<(), String> {
        match &mut self.objects[target] {
            Object::List(v) => {
                v.extend(items);
                Ok(())
            }
            Object::Dict(d) => {
                if !items.len().is_multiple_of(2) {
                    return Err(err("odd items for a dict", at));
                }
                d.extend(items.chunks(2).map(|kv| (kv[0], kv[1])));
                Ok(())
            }
            Object::Leaf(_) => Err(err("items added to a value that is no container", at)),
        }
    }

    /// How many values object `i` becomes once every shared object is
    /// copied at each reference (saturating), each object counted once
    /// (`sizes` remembers them); a cycle or too deep a nesting is an error.
    fn expanded(
        &self,
        i: usize,
        depth: usize,
        sizes: &mut [Option<usize>],
    ) -> Result<usize, String> {
        if depth > MAX_DEPTH {
            return Err("pickle: nested too deep (a cycle?)".to_owned());
        }
        if let Some(n) = sizes[i] {
            return Ok(n);
        }
        let children: Vec<usize> = match &self.objects[i] {
            Object::Leaf(_) => Vec::new(),
            Object::List(items) => items.clone(),
            Object::Dict(pairs) => pairs.iter().flat_map(|&(k, v)| [k, v]).collect(),
        };
        let mut n = 1usize;
        for c in children {
            n = n.saturating_add(self.expanded(c, depth + 1, sizes)?);
        }
        sizes[i] = Some(n);
        Ok(n)
    }

    fn value(&self, i: usize, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("pickle: nested too deep (a cycle?)".to_owned());
        }

        Ok(match &self.objects[i] {
            Object::Leaf(v) => v.clone(),
            Object::List(items) => Value::Array(
                items
                    .iter()
                    .map(|&j| self.value(j, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Object::Dict(pairs) => {
                let mut map = Map::new();
                for &(k, v) in pairs {
                    let key = match self.value(k, depth + 1)? {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    map.insert(key, self.value(v, depth + 1)?);
                }
                Value::Object(map)
            }
        })
    }
}

/// A little-endian two's-complement integer (pickle's LONG1/LONG4): an
/// `i64`, or a `u64` above it (addresses can be); wider is `null`.
fn long(bytes: &[u8]) -> Value {
    match bytes.len() {
        0 => Value::from(0),
        1..=8 => {
            let fill = if bytes[bytes.len() - 1] & 0x80 != 0 {
                0xff
            } else {
                0
            };
            let mut b = [fill; 8];
            b[..bytes.len()].copy_from_slice(bytes);
            Value::from(i64::from_le_bytes(b))
        }
        9 if bytes[8] == 0 => {
            let mut b = [0; 8];
            b.copy_from_slice(&bytes[..8]);
            Value::from(u64::from_le_bytes(b))
        }
        _ => Value::Null,
    }
}

/// Reads the pickle `data` into a JSON value.
pub fn read(data: &[u8]) -> Result<Value, String> {
    let mut m = Machine {
        objects: Vec::new(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: std::collections::HashMap::new(),
    };
    let mut pos = 0usize;
    let take = |pos: &mut usize, n: usize| -> Result<&[u8], String> {
        let end = pos
            .checked_add(n)
            .filter(|e| *e <= data.len())
            .ok_or_else(|| err("truncated", *pos))?;
        let s = &data[*pos..end];
        *pos = end;
        Ok(s)
    };
    let uint = |b: &[u8]| b.iter().rev().fold(0u64, |n, &x| (n << 8) | u64::from(x));
    let text = |b: &[u8], at: usize| -> Result<Value, String> {
        std::str::from_utf8(b)
            .map(|s| Value::from(s.to_owned()))
            .map_err(|_| err("a string that is not UTF-8", at))
    };
    loop {
        let at = pos;
        let op = *take(&mut pos, 1)?.first().unwrap_or(&0);
        match op {
            0x80 => drop(take(&mut pos, 1)?),    // PROTO
            0x95 => drop(take(&mut pos, 8)?),    // FRAME
            b'.' => break,                       // STOP
            b'(' => m.marks.push(m.stack.len()), // MARK
            b'}' => m.push(Object::Dict(Vec::new())),
            b']' => m.push(Object::List(Vec::new())),
            b')' => m.push(Object::List(Vec::new())), // EMPTY_TUPLE
            0x8f => m.push(Object::List(Vec::new())), // EMPTY_SET
            b't' | b'l' | 0x91 => {
                // TUPLE, LIST, FROZENSET
                let items = m.pop_mark(at)?;
                m.push(Object::List(items));
            }
            b'd' => {
                // DICT
                let items = m.pop_mark(at)?;
                m.push(Object::Dict(Vec::new()));
                let d = m.top(at)?;
                m.extend(d, items, at)?;
            }
            0x85..=0x87 => {
                // TUPLE1, TUPLE2, TUPLE3
                let n = usize::from(op - 0x84);
                if m.stack.len() < n {
                    return Err(err("stack underflow", at));
                }
                let items = m.stack.split_off(m.stack.len() - n);
                m.push(Object::List(items));
            }
            b'a' => {
                // APPEND
                let item = m.pop(at)?;
                let list = m.top(at)?;
                m.extend(list, vec![item], at)?;
            }
            b's' => {
                // SETITEM
                let v = m.pop(at)?;
                let k = m.pop(at)?;
                let d = m.top(at)?;
                m.extend(d, vec![k, v], at)?;
            }
            b'e' | b'u' | 0x90 => {
                // APPENDS, SETITEMS, ADDITEMS
                let items = m.pop_mark(at)?;
                let target = m.top(at)?;
                m.extend(target, items, at)?;
            }
            0x94 => {
                // MEMOIZE
                let top = m.top(at)?;
                let id = m.memo.len() as u64;
                m.memo.insert(id, top);
            }
            b'q' | b'r' => {
                // BINPUT, LONG_BINPUT
                let id = uint(take(&mut pos, if op == b'q' { 1 } else { 4 })?);
                let top = m.top(at)?;
                m.memo.insert(id, top);
            }
            b'h' | b'j' => {
                // BINGET, LONG_BINGET
                let id = uint(take(&mut pos, if op == b'h' { 1 } else { 4 })?);
                let o = *m.memo.get(&id).ok_or_else(|| err("unknown memo", at))?;
                m.stack.push(o);
            }
            b'N' => m.push(Object::Leaf(Value::Null)),
            0x88 => m.push(Object::Leaf(Value::Bool(true))),
            0x89 => m.push(Object::Leaf(Value::Bool(false))),
            b'J' => {
                let b = take(&mut pos, 4)?;
                let n = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                m.push(Object::Leaf(Value::from(n)));
            }
            b'K' | b'M' => {
                let n = uint(take(&mut pos, if op == b'K' { 1 } else { 2 })?);
                m.push(Object::Leaf(Value::from(n)));
            }
            0x8a | 0x8b => {
                // LONG1, LONG4
                let n = uint(take(&mut pos, if op == 0x8a { 1 } else { 4 })?);
                let b = take(
                    &mut pos,
                    usize::try_from(n).map_err(|_| err("too long", at))?,
                )?;
                m.push(Object::Leaf(long(b)));
            }
            b'G' => {
                let b = take(&mut pos, 8)?;
                let mut a = [0; 8];
                a.copy_from_slice(b);
                m.push(Object::Leaf(Value::from(f64::from_be_bytes(a))));
            }
            0x8c | b'X' | 0x8d | b'C' | b'B' | 0x8e => {
                // SHORT_BINUNICODE, BINUNICODE, BINUNICODE8, SHORT_BINBYTES,
                // BINBYTES, BINBYTES8 (bytes read as text, lossily)
                let width = match op {
                    0x8c | b'C' => 1,
                    b'X' | b'B' => 4,
                    _ => 8,
                };
                let n = uint(take(&mut pos, width)?);
                let b = take(
                    &mut pos,
                    usize::try_from(n).map_err(|_| err("too long", at))?,
                )?;
                let v = if matches!(op, b'C' | b'B' | 0x8e) {
                    Value::from(String::from_utf8_lossy(b).into_owned())
                } else {
                    text(b, at)?
                };
                m.push(Object::Leaf(v));
            }
            b'0' => drop(m.pop(at)?),      // POP
            b'1' => drop(m.pop_mark(at)?), // POP_MARK
            b'2' => {
                // DUP
                let top = m.top(at)?;
                m.stack.push(top);
            }
            other => {
                return Err(err(
                    format_args!(
                        "opcode {other:#04x} is not plain data (a class or a custom object)"
                    ),
                    at,
                ));
            }
        }
    }
    let top = m.top(pos)?;
    let mut sizes = vec![None; m.objects.len()];
    if m.expanded(top, 0, &mut sizes)? > MAX_VALUES {
        return Err("pickle: too large once its shared objects are copied".to_owned());
    }
    m.value(top, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dict memoized once and referenced twice, whose keys are memoized
    /// too (what `serde-pickle` cannot read): both references see it
    /// whole. Bytes as Python 3.11's `pickle.dumps(x, protocol=4)` writes
    /// them for `f = {"line": 3}; x = [f, f, 2**63]`.
    #[test]
    fn shared_containers_are_read_whole() {
        let data = b"\x80\x04\x95\x1e\x00\x00\x00\x00\x00\x00\x00]\x94(}\x94\x8c\x04line\x94K\x03sh\x01\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00e.";
        let v = read(data).unwrap();
        assert_eq!(
            v,
            serde_json::json!([{"line": 3}, {"line": 3}, 9223372036854775808u64])
        );
    }

    #[test]
    fn what_is_not_plain_data_is_an_error() {
        assert!(
            read(b"\x80\x04c__main__\nX\n.")
                .unwrap_err()
                .contains("not plain data")
        );
        assert!(read(b"\x80\x04]\x94(").unwrap_err().contains("truncated"));
        assert!(
            read(b"\x80\x04h\x05.")
                .unwrap_err()
                .contains("unknown memo")
        );
        assert!(read(b"").is_err());
        // A list that holds itself: a cycle, refused.
        assert!(
            read(b"\x80\x04]\x94h\x00a.")
                .unwrap_err()
                .contains("too deep")
        );
        // A list holding the one before it twice, 40 deep: 2^40 values
        // once copied, refused without trying.
        let mut bomb = b"\x80\x04]\x94".to_vec();
        for i in 0..40u8 {
            bomb.extend_from_slice(&[b'h', i, b'h', i, 0x86, 0x94]);
        }
        bomb.push(b'.');
        assert!(read(&bomb).unwrap_err().contains("too large"));
    }
}
