//! A forward reader of msgpack that skips values without building them: how hipshim and
//! hsasim read the AMDGPU metadata note (LLVM `AMDGPUUsage`, "Code Object V3+ Metadata"),
//! one map that may describe thousands of kernels of which a program launches a few. Decoding
//! it into a tree costs tens of millions of instructions for a large library.

use rmp::Marker;
use std::fmt;

/// Why the msgpack could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The bytes end inside a value.
    Truncated,
    /// The reserved marker byte 0xc1.
    Reserved,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::Truncated => "unexpected end of the metadata",
            Error::Reserved => "reserved marker 0xc1",
        })
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Reads values from the front of `bytes` (see the module documentation).
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.at
    }

    /// What is left to read; after a caller decoded a value from it some other way, it
    /// reports how much was used with [`Reader::consumed`].
    pub fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at..]
    }

    /// Marks `n` bytes of [`Reader::rest`] as read (at most what is left).
    pub fn consumed(&mut self, n: usize) {
        self.at = (self.at + n).min(self.bytes.len());
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8]> {
        let n = usize::try_from(n).map_err(|_| Error::Truncated)?;
        let end = self.at.checked_add(n).ok_or(Error::Truncated)?;
        let bytes = self.bytes.get(self.at..end).ok_or(Error::Truncated)?;
        self.at = end;
        Ok(bytes)
    }

    /// A big-endian unsigned integer of `n` (1, 2, 4 or 8) bytes.
    fn uint(&mut self, n: u64) -> Result<u64> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0, |v, &b| (v << 8) | u64::from(b)))
    }

    fn peek(&self) -> Result<Marker> {
        let byte = *self.bytes.get(self.at).ok_or(Error::Truncated)?;
        Ok(Marker::from_u8(byte))
    }

    /// The length of the map that follows, consumed; `None` (nothing consumed) for another
    /// kind of value.
    pub fn map_len(&mut self) -> Result<Option<u64>> {
        let len = match self.peek()? {
            Marker::FixMap(n) => {
                self.at += 1;
                u64::from(n)
            }
            Marker::Map16 => {
                self.at += 1;
                self.uint(2)?
            }
            Marker::Map32 => {
                self.at += 1;
                self.uint(4)?
            }
            _ => return Ok(None),
        };
        Ok(Some(len))
    }

    /// As [`Reader::map_len`], for arrays.
    pub fn array_len(&mut self) -> Result<Option<u64>> {
        let len = match self.peek()? {
            Marker::FixArray(n) => {
                self.at += 1;
                u64::from(n)
            }
            Marker::Array16 => {
                self.at += 1;
                self.uint(2)?
            }
            Marker::Array32 => {
                self.at += 1;
                self.uint(4)?
            }
            _ => return Ok(None),
        };
        Ok(Some(len))
    }

    /// The string that follows, consumed; `None` for another kind of value (skipped).
    pub fn str(&mut self) -> Result<Option<&'a [u8]>> {
        let len = match self.peek()? {
            Marker::FixStr(n) => {
                self.at += 1;
                u64::from(n)
            }
            Marker::Str8 => {
                self.at += 1;
                self.uint(1)?
            }
            Marker::Str16 => {
                self.at += 1;
                self.uint(2)?
            }
            Marker::Str32 => {
                self.at += 1;
                self.uint(4)?
            }
            _ => {
                self.skip()?;
                return Ok(None);
            }
        };
        self.take(len).map(Some)
    }

    /// The non-negative integer that follows, consumed; `None` for another kind of value
    /// (skipped).
    pub fn uint_value(&mut self) -> Result<Option<u64>> {
        let width = match self.peek()? {
            Marker::FixPos(n) => {
                self.at += 1;
                return Ok(Some(u64::from(n)));
            }
            Marker::U8 => 1,
            Marker::U16 => 2,
            Marker::U32 => 4,
            Marker::U64 => 8,
            // Signed forms of values that happen to be non-negative (encoders may use them).
            Marker::I8 | Marker::I16 | Marker::I32 | Marker::I64 => {
                let width = match self.peek()? {
                    Marker::I8 => 1,
                    Marker::I16 => 2,
                    Marker::I32 => 4,
                    _ => 8,
                };
                self.at += 1;
                let raw = self.uint(width)?;
                let bits = 8 * width as u32;
                let negative = raw >> (bits - 1) & 1 == 1;
                return Ok((!negative).then_some(raw));
            }
            _ => {
                self.skip()?;
                return Ok(None);
            }
        };
        self.at += 1;
        self.uint(width).map(Some)
    }

    /// The boolean that follows, consumed; `None` for another kind of value (skipped).
    pub fn bool_value(&mut self) -> Result<Option<bool>> {
        match self.peek()? {
            Marker::True | Marker::False => {
                let value = self.peek()? == Marker::True;
                self.at += 1;
                Ok(Some(value))
            }
            _ => {
                self.skip()?;
                Ok(None)
            }
        }
    }

    /// Skips one value, however nested, without recursing (so no input can exhaust the
    /// stack): a count of the values still to skip grows by each container's length.
    pub fn skip(&mut self) -> Result<()> {
        let mut pending: u64 = 1;
        while pending > 0 {
            pending -= 1;
            let byte = *self.bytes.get(self.at).ok_or(Error::Truncated)?;
            self.at += 1;
            // The forms metadata is made of, by their marker byte, before the rest.
            let (bytes, items) = match byte {
                0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => continue,
                0xa0..=0xbf => (u64::from(byte & 0x1f), 0),
                0x90..=0x9f => (0, u64::from(byte & 0x0f)),
                0x80..=0x8f => (0, 2 * u64::from(byte & 0x0f)),
                _ => self.sized(Marker::from_u8(byte))?,
            };
            self.take(bytes)?;
            pending = pending.saturating_add(items);
        }
        Ok(())
    }

    /// For a marker other than the fixed-size forms (its byte consumed): the payload bytes
    /// that follow its length field, and the values it contains.
    fn sized(&mut self, marker: Marker) -> Result<(u64, u64)> {
        Ok(match marker {
            Marker::U8 | Marker::I8 => (1, 0),
            Marker::U16 | Marker::I16 => (2, 0),
            Marker::U32 | Marker::I32 | Marker::F32 => (4, 0),
            Marker::U64 | Marker::I64 | Marker::F64 => (8, 0),
            Marker::Str8 | Marker::Bin8 => (self.uint(1)?, 0),
            Marker::Str16 | Marker::Bin16 => (self.uint(2)?, 0),
            Marker::Str32 | Marker::Bin32 => (self.uint(4)?, 0),
            Marker::FixExt1 => (2, 0),
            Marker::FixExt2 => (3, 0),
            Marker::FixExt4 => (5, 0),
            Marker::FixExt8 => (9, 0),
            Marker::FixExt16 => (17, 0),
            Marker::Ext8 => (self.uint(1)? + 1, 0),
            Marker::Ext16 => (self.uint(2)? + 1, 0),
            Marker::Ext32 => (self.uint(4)? + 1, 0),
            Marker::Array16 => (0, self.uint(2)?),
            Marker::Array32 => (0, self.uint(4)?),
            Marker::Map16 => (0, 2 * self.uint(2)?),
            Marker::Map32 => (0, 2 * self.uint(4)?),
            Marker::Reserved => return Err(Error::Reserved),
            // Fixed forms are handled by the caller.
            Marker::FixPos(_)
            | Marker::FixNeg(_)
            | Marker::Null
            | Marker::True
            | Marker::False
            | Marker::FixStr(_)
            | Marker::FixArray(_)
            | Marker::FixMap(_) => (0, 0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_in_every_width_and_other_values_skipped() {
        let bytes = [
            0x05, // fixpos 5
            0xcc, 0xc8, // u8 200
            0xcd, 0x01, 0x00, // u16 256
            0xce, 0x00, 0x01, 0x00, 0x00, // u32 65536
            0xcf, 0, 0, 0, 1, 0, 0, 0, 0, // u64 2^32
            0xd0, 0x7f, // i8 127
            0xd0, 0xff, // i8 -1
            0xa1, b'x', // "x"
            0xc3, // true
        ];
        let mut r = Reader::new(&bytes);
        let got: Vec<_> = (0..8).map(|_| r.uint_value().unwrap()).collect();
        assert_eq!(
            got,
            [
                Some(5),
                Some(200),
                Some(256),
                Some(65536),
                Some(1 << 32),
                Some(127),
                None,
                None
            ]
        );
        assert_eq!(r.bool_value(), Ok(Some(true)));
        assert_eq!(r.position(), bytes.len());
        assert_eq!(r.uint_value(), Err(Error::Truncated));
    }
}
