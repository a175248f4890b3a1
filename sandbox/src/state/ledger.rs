//! What the sandbox saw of each payment's keys, for a test or a person to check that every
//! payment was made once: how many times a money request's reference arrived, how many of
//! those the sandbox applied (a replay or a refusal applies nothing), and how many lookups
//! asked for a payment by a key of it.

use std::collections::HashMap;

/// The most keys counted; past it a new key is not counted (a test makes far fewer).
pub(crate) const MAX_COUNTED: usize = 100_000;

/// The counts, by reference and by looked-up key.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// By reference: the requests that carried it, and those applied.
    references: HashMap<String, (usize, usize)>,
    /// By the value a lookup asked for (an id, a reference).
    lookups: HashMap<String, usize>,
}

impl Ledger {
    /// A money request carrying `reference` arrived.
    pub(crate) fn received(&mut self, reference: &str) {
        if let Some(counts) = entry(&mut self.references, reference) {
            counts.0 += 1;
        }
    }

    /// A money request carrying `reference` was applied: it made a payment.
    pub(crate) fn applied(&mut self, reference: &str) {
        if let Some(counts) = entry(&mut self.references, reference) {
            counts.1 += 1;
        }
    }

    /// A lookup asked for the payment `key` names.
    pub(crate) fn looked_up(&mut self, key: &str) {
        if let Some(count) = entry(&mut self.lookups, key) {
            *count += 1;
        }
    }

    /// How many requests carried `reference`, and how many of them were applied.
    pub(crate) fn reference(&self, reference: Option<&str>) -> (usize, usize) {
        reference.and_then(|r| self.references.get(r)).copied().unwrap_or_default()
    }

    /// How many lookups asked for any of `keys` (the keys one payment is known by).
    pub(crate) fn lookups(&self, keys: &[&str]) -> usize {
        let mut seen: Vec<&str> = Vec::with_capacity(keys.len());
        keys.iter()
            .filter(|key| {
                !key.is_empty() && !seen.contains(key) && {
                    seen.push(key);
                    true
                }
            })
            .filter_map(|key| self.lookups.get(*key))
            .sum()
    }
}

/// The entry for `key`, made when there is room.
fn entry<'a, T: Default>(map: &'a mut HashMap<String, T>, key: &str) -> Option<&'a mut T> {
    if !map.contains_key(key) && map.len() >= MAX_COUNTED {
        return None;
    }
    Some(map.entry(key.to_owned()).or_default())
}

#[cfg(test)]
mod tests {
    use super::Ledger;

    #[test]
    fn counts_what_arrived_what_was_applied_and_the_lookups_of_a_payments_keys() {
        let mut ledger = Ledger::default();
        for _ in 0..3 {
            ledger.received("ref-1");
        }
        ledger.applied("ref-1");
        ledger.looked_up("txn-1");
        ledger.looked_up("ref-1");
        ledger.looked_up("ref-1");
        assert_eq!(ledger.reference(Some("ref-1")), (3, 1));
        assert_eq!(ledger.reference(Some("ref-2")), (0, 0));
        assert_eq!(ledger.reference(None), (0, 0));
        // A key named twice (the id is the reference) is counted once.
        assert_eq!(ledger.lookups(&["txn-1", "ref-1", "ref-1", ""]), 3);
    }
}
