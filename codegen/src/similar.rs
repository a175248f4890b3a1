//! How alike two names are, for "did you mean" hints: a few lines here instead of a crate
//! in every user's build (the build step runs the loader).
//!
//! Both measures compare `char`s and return 1.0 for equal words, 0.0 for nothing alike.
//! Words longer than [`MAX_CHARS`] are compared as unlike (no hint), so that no spec makes
//! the quadratic comparison slow.

/// The longest word compared; a longer one gets no suggestion.
pub(crate) const MAX_CHARS: usize = 128;

/// The Jaro–Winkler similarity: a Jaro similarity above 0.7 raised for a common prefix of
/// up to four characters, by a tenth of the rest per character.
pub(crate) fn jaro_winkler(a: &str, b: &str) -> f64 {
    let jaro = jaro(a, b);
    if jaro <= 0.7 {
        return jaro;
    }
    let prefix = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count().min(4);
    jaro + 0.1 * prefix as f64 * (1.0 - jaro)
}

/// The Jaro similarity: characters that match within half the longer length, and how many
/// of those are out of order.
fn jaro(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() || a.len() > MAX_CHARS || b.len() > MAX_CHARS {
        return 0.0;
    }
    let window = (a.len().max(b.len()) / 2).saturating_sub(1);
    let mut a_matched = vec![false; a.len()];
    let mut b_matched = vec![false; b.len()];
    let mut matches = 0usize;
    for (i, x) in a.iter().enumerate() {
        let low = i.saturating_sub(window);
        let high = (i + window + 1).min(b.len());
        for j in low..high {
            if !b_matched[j] && b[j] == *x {
                a_matched[i] = true;
                b_matched[j] = true;
                matches += 1;
                break;
            }
        }
    }
    if matches == 0 {
        return 0.0;
    }
    // The matched characters of each word, in order: each place they differ is half a
    // transposition.
    let in_a = a.iter().zip(&a_matched).filter(|(_, m)| **m).map(|(c, _)| c);
    let in_b = b.iter().zip(&b_matched).filter(|(_, m)| **m).map(|(c, _)| c);
    let transpositions = in_a.zip(in_b).filter(|(x, y)| x != y).count() / 2;
    let m = matches as f64;
    (m / a.len() as f64 + m / b.len() as f64 + (m - transpositions as f64) / m) / 3.0
}

/// One minus the Levenshtein distance (insertions, deletions, substitutions) over the
/// longer word's length.
pub(crate) fn normalized_levenshtein(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longer = a.len().max(b.len());
    if longer == 0 {
        return 1.0;
    }
    if longer > MAX_CHARS {
        return 0.0;
    }
    // One row of the distance table at a time.
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(x != y)).min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    1.0 - row[b.len()] as f64 / longer as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(x: f64, y: f64) -> bool {
        (x - y).abs() < 1e-9
    }

    // Textbook values: MARTHA/MARHTA (Jaro 0.944, Jaro-Winkler 0.961), DIXON/DICKSONX
    // (0.767, 0.813), kitten/sitting (Levenshtein 3 of 7).
    #[test]
    fn known_values() {
        assert!(close(jaro("MARTHA", "MARHTA"), 17.0 / 18.0));
        assert!(close(jaro_winkler("MARTHA", "MARHTA"), 17.0 / 18.0 + 0.3 * (1.0 / 18.0)));
        assert!((jaro("DIXON", "DICKSONX") - 0.7667).abs() < 1e-4);
        assert!((jaro_winkler("DIXON", "DICKSONX") - 0.8133).abs() < 1e-4);
        assert!(close(jaro_winkler("", ""), 1.0));
        assert!(close(jaro_winkler("a", ""), 0.0));
        assert!(close(jaro_winkler("abc", "xyz"), 0.0));
        assert!(close(jaro_winkler("same", "same"), 1.0));
        let long = "x".repeat(MAX_CHARS + 1);
        assert!(close(jaro_winkler(&long, &long), 0.0));
    }

    #[cfg(feature = "macros")]
    #[test]
    fn known_levenshtein_values() {
        assert!(close(normalized_levenshtein("kitten", "sitting"), 1.0 - 3.0 / 7.0));
        assert!(close(normalized_levenshtein("", ""), 1.0));
        assert!(close(normalized_levenshtein("abc", ""), 0.0));
        assert!(close(normalized_levenshtein("flaw", "lawn"), 0.5));
    }

    /// The same figures as the strsim crate, which the loader used before, on the words the
    /// hints compare: the spec's keys and names against misspellings of them.
    #[test]
    fn agrees_with_strsim() {
        let words = [
            "operations",
            "operation",
            "oeprations",
            "params",
            "parmas",
            "param",
            "response",
            "respnse",
            "effect",
            "efect",
            "idempotency",
            "idempotency_header",
            "idempotncy",
            "group",
            "groups",
            "success_codes",
            "sucess_codes",
            "pending_statuses",
            "failed_statuses",
            "wire",
            "wier",
            "required",
            "requried",
            "in",
            "body",
            "query",
            "path",
            "header",
            "transfers",
            "tranfers",
            "list_banks",
            "listbanks",
            "bank_transfer",
            "bank_transfer_from_sub_account",
            "é",
            "éa",
            "",
            "a",
            "ab",
            "ba",
            "abcdefghij",
            "jihgfedcba",
        ];
        for a in words {
            for b in words {
                assert!(close(jaro_winkler(a, b), strsim::jaro_winkler(a, b)), "{a:?} {b:?}");
                #[cfg(feature = "macros")]
                assert!(
                    close(normalized_levenshtein(a, b), strsim::normalized_levenshtein(a, b)),
                    "{a:?} {b:?}"
                );
            }
        }
    }
}
