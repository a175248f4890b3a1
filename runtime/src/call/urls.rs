//! The parsed URLs of routes without variables, kept per route so that a call does not
//! parse its URL again.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The most route URLs a client keeps parsed.
pub(super) const MAX_CACHED_URLS: usize = 4096;

/// Parsed route URLs, by the address and length of the route's static path text.
pub(super) type UrlCache = HashMap<(usize, usize), reqwest::Url, BuildHasherDefault<AddressHasher>>;

/// Mixes the two words of a [`UrlCache`] key (addresses need no keyed hash).
#[derive(Default)]
pub(super) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.write_u64(u64::from(*byte));
        }
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
