//! A value kept per route for the client's life (a route's parsed URL), found by where the
//! route's static path text lives: no hashing of the text per call, and no lock held while
//! a value is made.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use crate::service::Route;

/// Values by route, at most [`PerRoute::MAX`] of them: past it, a value is made each time
/// and not kept (routes are static, so a program has as many as it has routes).
pub(crate) struct PerRoute<V> {
    values: Mutex<HashMap<(usize, usize), V, BuildHasherDefault<AddressHasher>>>,
}

impl<V> Default for PerRoute<V> {
    fn default() -> Self {
        PerRoute { values: Mutex::default() }
    }
}

impl<V: Clone> PerRoute<V> {
    /// The most routes whose values are kept.
    pub(crate) const MAX: usize = 4096;

    /// `route`'s value: the one kept, or the one `make` makes (kept while there is room).
    pub(crate) fn get_or_make<E>(&self, route: &Route, make: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
        let key = (route.path.as_ptr() as usize, route.path.len());
        if let Some(value) = self.lock().get(&key) {
            return Ok(value.clone());
        }
        let value = make()?;
        let mut values = self.lock();
        if values.len() < Self::MAX {
            values.insert(key, value.clone());
        }
        Ok(value)
    }

    /// How many routes have a value kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(usize, usize), V, BuildHasherDefault<AddressHasher>>> {
        self.values.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Mixes the two words of a key (addresses need no keyed hash).
#[derive(Default)]
struct AddressHasher(u64);

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
