//! The JSON module's tests: values, reading and writing, and the parser.

use std::fmt;

use super::parse::*;
use super::reader::Reader;
use super::*;

#[test]
fn numbers_keep_their_text_both_ways() {
    let text = r#"{"a":1500.10,"b":90071992547409.93,"c":[0.10,-5,1e400],"d":"x","e":null,"f":true}"#;
    let value = Json::parse(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(serde_json::to_string(&value).ok().as_deref(), Some(text));
    assert_eq!(value.get("a"), Some(&Json::Number(JsonNumber::from_text("1500.10"))));
}

/// A struct read as a hand-written decoder may read one: a slot per declared field, two of
/// them required, the rest kept.
#[derive(Debug, PartialEq)]
struct Sample {
    id: String,
    n: i64,
    opt: Option<String>,
    other_fields: JsonObject,
}

impl FromJson for Sample {
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
        Sample::read_by(reader, at, true)
    }
}

impl Sample {
    /// Reads with [`Reader::fields`], as generated decoders do, or with [`Reader::object`].
    fn read_by(reader: &mut Reader<'_>, at: &Path<'_>, by_fields: bool) -> Result<Self, DecodeError> {
        let (mut id, mut n, mut opt) = (Slot::new(), Slot::new(), Slot::new());
        let mut other_fields = JsonObject::new();
        let mut entry = |key: &str, reader: &mut Reader<'_>| match key {
            "id" => id.read(reader, at, key, &mut other_fields),
            "n" => n.read(reader, at, key, &mut other_fields),
            "opt" => opt.read(reader, at, key, &mut other_fields),
            _ => other_fields.read_entry(key, reader, at),
        };
        if by_fields {
            reader.fields(at, &mut entry)?;
        } else {
            reader.object(at, &mut entry)?;
        }
        Ok(Sample { id: id.required(at, "id")?, n: n.required(at, "n")?, opt: opt.optional(), other_fields })
    }
}

fn sample(text: &str) -> Result<Sample, String> {
    let mut reader = Reader::over_checked(text.as_bytes()).map_err(|e| e.to_string())?;
    Sample::read(&mut reader, &Path::root("data")).map_err(|e| e.to_string())
}

#[test]
fn slots_take_what_is_declared_and_keep_the_rest() {
    let read =
        sample(r#"{"id":"t1","n":"12","opt":null,"extra":{"k":1.0}}"#).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((read.id.as_str(), read.n, read.opt.as_deref()), ("t1", 12, None));
    assert_eq!(
        serde_json::to_string(&Json::Object(read.other_fields)).ok().as_deref(),
        Some(r#"{"extra":{"k":1.0}}"#)
    );
    assert_eq!(sample(r#"{"n":1}"#), Err("`data.id`: missing, though the spec marks it required".into()));
    assert_eq!(
        sample(r#"{"id":null,"n":1}"#),
        Err("`data.id`: null, though the spec marks it required".into())
    );
    assert_eq!(
        sample(r#"{"id":"a","n":true}"#),
        Err("`data.n`: not of its declared type, though the spec marks it required".into())
    );
    // A field of another kind is noted and kept as it came; the rest is read.
    let mut reader =
        Reader::over_checked(br#"{"id":"a","n":1,"opt":[1,{"x":2}]}"#).unwrap_or_else(|e| panic!("{e}"));
    let read = Sample::read(&mut reader, &Path::root("data")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((read.id.as_str(), read.n, read.opt.as_deref()), ("a", 1, None));
    assert_eq!(
        read.other_fields.get("opt").and_then(|v| serde_json::to_string(v).ok()).as_deref(),
        Some(r#"[1,{"x":2}]"#)
    );
    let (notes, total) = reader.take_unread();
    assert_eq!(total, 1);
    assert_eq!(
        notes.first().map(ToString::to_string).as_deref(),
        Some("`data.opt`: expected a string, found an array")
    );
    assert_eq!(sample(r#"["id"]"#), Err("`data`: expected an object, found an array".into()));
    // The tree path reads by the same rules.
    let tree = Json::parse(r#"{"n":7,"id":"t2","z":[1]}"#).unwrap_or_default();
    let from_tree = Sample::from_json(tree, &Path::root("data")).map_err(|e| e.to_string());
    assert_eq!(from_tree.as_ref().map(|s| (s.id.as_str(), s.n, s.other_fields.len())), Ok(("t2", 7, 1)));
}

#[test]
fn slots_fill_in_any_order_in_objects_of_any_size_and_a_repeated_key_is_refused() {
    let entries: Vec<String> = (0..70).map(|i| format!(r#""k{i}":{i}"#)).collect();
    let text = format!(r#"{{{},"opt":"late","n":5,"id":"first"}}"#, entries.join(","));
    let read = sample(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((read.id.as_str(), read.n, read.opt.as_deref()), ("first", 5, Some("late")));
    // Every undeclared key, in the order they came.
    let keys: Vec<&str> = read.other_fields.iter().map(|(k, _)| k).collect();
    let expected: Vec<String> = (0..70).map(|i| format!("k{i}")).collect();
    assert_eq!(keys, expected);
    // A key written twice, among few keys or many, declared or not, plainly or escaped,
    // after a value that was null or of another kind, is not read at all: which of the two
    // counts is a question readers answer apart. So by both ways of reading an object.
    let mut repeats = vec![
        r#"{"id":"first","id":"again"}"#.to_owned(),
        r#"{"id":"x","n":5,"\u006e":6}"#.to_owned(),
        format!(r#"{{{},"id":"x","k69":1}}"#, entries.join(",")),
        format!(r#"{{{},"id":"x","k\u0036":1}}"#, entries.join(",")),
        r#"{"id":"x","extra":{"a":1,"a":2}}"#.to_owned(),
        r#"{"id":null,"n":1,"id":"x"}"#.to_owned(),
        r#"{"id":"x","n":"many","n":1}"#.to_owned(),
        r#"{"id":"x","zz":1,"n":1,"z\u007a":[2]}"#.to_owned(),
        r#"{"id":"x","n":1,"opt":{"id":"in","id":"in"}}"#.to_owned(),
    ];
    repeats.push(format!(r#"{{"id":"x","n":1,"opt":null,{},"opt":"x"}}"#, entries.join(",")));
    for repeated in &repeats {
        for by_fields in [true, false] {
            let mut reader = Reader::over_checked(repeated.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
            let read = Sample::read_by(&mut reader, &Path::root("data"), by_fields);
            assert!(read.is_err(), "{repeated} (by fields: {by_fields}): {read:?}");
            let fault = reader.fault(None);
            assert_eq!(fault.as_ref().map(|f| f.reason), Some(REPEATED_KEY), "{repeated}");
            // At the second of the two keys, found the same way both ways.
            let mut other = Reader::over_checked(repeated.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
            let _ = Sample::read_by(&mut other, &Path::root("data"), !by_fields);
            assert_eq!(other.fault(None), fault, "{repeated}");
        }
    }
    // The same keys once each are read both ways alike.
    for text in [r#"{"id":"x","n":1,"zz":1,"z":2}"#.to_owned(), text.clone()] {
        let by = |by_fields| {
            let mut reader = Reader::over_checked(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
            Sample::read_by(&mut reader, &Path::root("data"), by_fields).map_err(|e| e.to_string())
        };
        assert_eq!(by(true), by(false), "{text}");
    }
}

/// The same fields read as the generated decoders read theirs: every field optional,
/// each read in its place, counted by a [`Seen`] of `WORDS` words with the fields
/// numbered `numbers`; `opt` read as a listing's cursor is when `cursor`.
#[derive(Debug, PartialEq)]
struct InPlace {
    id: Option<String>,
    n: Option<i64>,
    opt: Option<String>,
    other_fields: JsonObject,
}

impl InPlace {
    fn read<const WORDS: usize>(
        reader: &mut Reader<'_>,
        at: &Path<'_>,
        numbers: [usize; 3],
        cursor: bool,
    ) -> Result<Self, DecodeError> {
        let mut answer = InPlace { id: None, n: None, opt: None, other_fields: JsonObject::new() };
        let mut seen = Seen::<WORDS>::new();
        reader.fields(at, |key, reader| match key {
            "id" => seen.read(numbers[0], &mut answer.id, reader, at, key, &mut answer.other_fields),
            "n" => seen.read(numbers[1], &mut answer.n, reader, at, key, &mut answer.other_fields),
            "opt" if cursor => {
                seen.read_text(numbers[2], &mut answer.opt, reader, at, key, &mut answer.other_fields)
            }
            "opt" => seen.read(numbers[2], &mut answer.opt, reader, at, key, &mut answer.other_fields),
            _ => answer.other_fields.read_entry(key, reader, at),
        })?;
        Ok(answer)
    }
}

#[test]
fn fields_read_in_place_are_read_as_slots_read_them() {
    let entries: Vec<String> = (0..70).map(|i| format!(r#""k{i}":{i}"#)).collect();
    let mut texts = vec![
        r#"{"id":"t1","n":"12","opt":null,"extra":{"k":1.0}}"#.to_owned(),
        r#"{"id":"a","n":1,"opt":[1,{"x":2}]}"#.to_owned(),
        r#"{"id":"x","n":1,"zz":1,"z":2}"#.to_owned(),
        format!(r#"{{{},"opt":"late","n":5,"id":"first"}}"#, entries.join(",")),
        // Repeated, as the slots' test has them.
        r#"{"id":"first","id":"again"}"#.to_owned(),
        r#"{"id":"x","n":5,"\u006e":6}"#.to_owned(),
        format!(r#"{{{},"id":"x","k69":1}}"#, entries.join(",")),
        r#"{"id":null,"n":1,"id":"x"}"#.to_owned(),
        r#"{"id":"x","n":"many","n":1}"#.to_owned(),
        r#"{"id":"x","n":1,"opt":{"id":"in","id":"in"}}"#.to_owned(),
        format!(r#"{{"id":"x","n":1,"opt":null,{},"opt":"x"}}"#, entries.join(",")),
        r#"{"id":"x","n":1,"opt":7,"opt":"again"}"#.to_owned(),
    ];
    texts.push(r#"{"id":"x","n":1,"opt":"a","opt":7}"#.to_owned());
    for text in &texts {
        let at = Path::root("data");
        // In the first word, and past it: the same answer, the same fault, the same notes.
        for numbers in [[0, 1, 2], [0, 65, 127]] {
            let mut slots = Reader::over_checked(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
            let by_slots = Sample::read_by(&mut slots, &at, true);
            let mut in_place = Reader::over_checked(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
            let read = InPlace::read::<2>(&mut in_place, &at, numbers, false);
            assert_eq!(read.is_ok(), by_slots.is_ok(), "{text}: {read:?} / {by_slots:?}");
            if let (Ok(read), Ok(slots)) = (&read, &by_slots) {
                assert_eq!(read.id.as_deref(), Some(slots.id.as_str()), "{text}");
                assert_eq!((read.n, &read.opt), (Some(slots.n), &slots.opt), "{text}");
                assert_eq!(read.other_fields, slots.other_fields, "{text}");
            }
            assert_eq!(in_place.fault(None), slots.fault(None), "{text}");
            assert_eq!(in_place.take_unread(), slots.take_unread(), "{text}");
        }
    }
    // A cursor sent as a number is read as its text; any other kind, and a repeat, as
    // every field is.
    let cursor = |text: &str| {
        let mut reader = Reader::over_checked(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        let read = InPlace::read::<1>(&mut reader, &Path::root("data"), [0, 1, 2], true);
        (read.map(|r| r.opt).map_err(|e| e.to_string()), reader.take_unread().1)
    };
    assert_eq!(cursor(r#"{"opt":12.50}"#), (Ok(Some("12.50".to_owned())), 0));
    assert_eq!(cursor(r#"{"opt":"c-2"}"#), (Ok(Some("c-2".to_owned())), 0));
    assert_eq!(cursor(r#"{"opt":null}"#), (Ok(None), 0));
    assert_eq!(cursor(r#"{"opt":[1]}"#), (Ok(None), 1));
    for repeated in [r#"{"opt":1,"opt":2}"#, r#"{"opt":"a","opt":2}"#, r#"{"opt":null,"opt":2}"#] {
        assert!(cursor(repeated).0.is_err(), "{repeated}");
    }
    // A number past the words is never seen: the generator gives every struct the words
    // its fields need, so this is only what happens to a hand-written one that does not.
    let mut reader = Reader::over_checked(br#"{"n":1,"n":2}"#).unwrap_or_else(|e| panic!("{e}"));
    let read = InPlace::read::<1>(&mut reader, &Path::root("data"), [0, 64, 2], false);
    assert_eq!(read.map(|r| r.n), Ok(Some(2)));
    let mut seen = Seen::<1>::new();
    assert!(!seen.has(3));
    assert!(!seen.seen_before(3));
    assert!(seen.has(3) && seen.seen_before(3));
}

#[test]
fn reading_the_text_and_reading_the_tree_agree() {
    fn both<T: FromJson + PartialEq + fmt::Debug>(text: &str) {
        let at = Path::root("data");
        let tree = Json::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let from_tree = T::from_json(tree, &at);
        let mut reader = Reader::over_checked(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
        let from_text = T::read(&mut reader, &at);
        assert_eq!(from_text, from_tree, "{text}");
    }
    for text in [r#""x""#, r#""\u00e9\n""#, "1", "null", "true", "[]", "{}", r#""TRUE""#, r#"" 42 ""#, "-7"] {
        both::<String>(text);
        both::<bool>(text);
        both::<i64>(text);
        both::<Option<i64>>(text);
        both::<Vec<String>>(text);
        both::<Json>(text);
    }
    for text in [r#"["a","b"]"#, r#"[["a"],[]]"#, r#"[1,"2",null]"#, "[[1,2],[3]]"] {
        both::<Vec<String>>(text);
        both::<Vec<Option<i64>>>(text);
        both::<Vec<Vec<i64>>>(text);
    }
}

#[test]
fn errors_name_the_path_and_the_kind_never_the_value() {
    let value = Json::parse(r#"[{"a":"x"},{"a":"secret-value"}]"#).unwrap_or_default();
    let root = Path::root("data");
    let items: Result<Vec<Json>, _> = Vec::from_json(value.clone(), &root);
    assert!(items.is_ok());
    // Items of another kind are left out, one by one; data of another kind is an error.
    let as_numbers: Result<Vec<Vec<i64>>, _> = Vec::from_json(value.clone(), &root);
    assert_eq!(as_numbers, Ok(Vec::new()));
    let object = Json::parse(r#"{"a":"secret-value"}"#).unwrap_or_default();
    let as_list: Result<Vec<i64>, _> = Vec::from_json(object, &root);
    let error = as_list.err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(error, "`data`: expected an array, found an object");
    assert!(!error.contains("secret"));
}

fn round_trip(text: &str) -> String {
    let value = parse(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
    serde_json::to_string(&value).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn reads_what_serde_json_reads_and_keeps_number_text() {
    for text in [
        r#"{"a":1500.10,"b":-0.5e-3,"c":[true,false,null,0],"d":{"e":"x"},"k":[]}"#,
        r#"{"long key that is well past twenty-two bytes":"v","":1}"#,
        r#"[1,2,[3,[4]]]"#,
        r#""text""#,
        r#"12345678901234567890123456789.123456789"#,
    ] {
        assert_eq!(round_trip(text), text);
    }
    // Escapes, surrogate pairs and whitespace read as serde_json reads them.
    let text = " {\"a\\n\\\"b\" : \"\\u00e9\\ud83d\\ude00\\/\\t\" } ";
    let ours = parse(text.as_bytes()).map(|v| serde_json::to_value(&v).ok());
    let theirs = serde_json::from_str::<serde_json::Value>(text).ok();
    assert_eq!(ours, Ok(theirs));
}

#[test]
fn refuses_what_is_not_json_at_its_place_without_quoting_it() {
    for (text, reason) in [
        ("", "unexpected end of JSON"),
        ("{\"a\":1,}", "expected a key"),
        ("{\"a\" 1}", "expected `:`"),
        ("[1 2]", "expected `,` or `]`"),
        ("01", "trailing characters"),
        ("-", "invalid number"),
        ("1.", "invalid number"),
        ("\"a\\x\"", "invalid escape"),
        ("\"\\ud800\"", "a lone surrogate in a string"),
        ("\"a\nb\"", "control character in a string"),
        ("tru", "expected a value"),
        ("{\"secret-value\":1} x", "trailing characters"),
    ] {
        let error = parse(text.as_bytes()).expect_err(text);
        assert_eq!(error.reason, reason, "{text:?}");
        assert!(!error.to_string().contains("secret"), "{error}");
    }
    let error = parse(b"{\n  \"a\": \xff}").expect_err("not UTF-8");
    assert_eq!((error.line, error.column), (2, 8));
    assert!(parse(b"\"\xc3\x28\"").is_err());
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let deep = "[".repeat(1_000_000);
    let error = parse(deep.as_bytes()).expect_err("too deep");
    assert_eq!(error.reason, "nested too deeply");
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(parse(ok.as_bytes()).is_ok());
    let objects = "{\"a\":".repeat(MAX_DEPTH + 1);
    assert_eq!(parse(objects.as_bytes()).map_err(|e| e.reason), Err("nested too deeply"));
}

#[test]
fn an_envelope_is_read_entry_by_entry() {
    let mut keys = Vec::new();
    let text = br#"{"code":"00","data":{"x":[1]},"c\u006fde":"01"}"#;
    let object = parse_entries(text, &mut |k, parser| {
        keys.push(k.to_owned());
        parser.skip(1).map(|()| true)
    });
    // A key met twice (here escaped) is refused where it repeats.
    assert_eq!(object.map_err(|e| (e.reason, e.column)), Err((REPEATED_KEY, 31)));
    assert_eq!(keys, ["code", "data"]);
    assert_eq!(parse_entries(b"[1]", &mut |_, p| p.skip(1).map(|()| true)), Ok(false));
    assert!(parse_entries(b"{\"a\":1", &mut |_, p| p.skip(1).map(|()| true)).is_err());
    // The data found without checking it, brackets and quotes in its strings aside.
    let text = br#"{"data" : [1, {"a":"}\"]"}] ,"x":2}"#;
    let mut data = None;
    let found = parse_entries(text, &mut |k, p| {
        if k == "data" {
            data = Some(p.skip_unchecked(1)?);
        } else {
            p.skip(1)?;
        }
        Ok(true)
    });
    assert_eq!(found, Ok(true));
    assert_eq!(data.map(|d| &text[d]), Some(&br#"[1, {"a":"}\"]"}]"#[..]));
    assert_eq!(value_at(text, 10, 1), Some(10..27));
    // A reading stopped at a key leaves the rest unread, even text that is not JSON.
    let mut seen = Vec::new();
    let stopped = parse_entries(br#"{"a":1,"stop":[,,"#, &mut |k, p| {
        seen.push(k.to_owned());
        if k == "stop" { Ok(false) } else { p.skip(1).map(|()| true) }
    });
    assert_eq!((stopped, seen), (Ok(true), vec!["a".to_owned(), "stop".to_owned()]));
}

#[test]
fn the_word_scan_stops_where_the_byte_scan_stops() {
    let mut text: Vec<u8> = (0..=255u8).collect();
    text.extend_from_slice(b"plain text, \xc3\xa9 and more plain text");
    for start in 0..text.len() {
        for end in start..(start + 40).min(text.len()) {
            let slice = &text[start..end];
            let bytewise = slice.iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\');
            assert_eq!(string_stop(slice), bytewise, "{slice:?}");
        }
    }
    for b in 0..=255u8 {
        for at in 0..17 {
            let mut slice = vec![b'a'; 17];
            slice[at] = b;
            let bytewise = slice.iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\');
            assert_eq!(string_stop(&slice), bytewise, "{b} at {at}");
        }
    }
}

/// Answers cut short at every byte and with every byte replaced by a character that
/// matters to JSON: checking without building finds each fault where building does.
#[test]
fn checking_without_building_refuses_what_parsing_refuses_at_the_same_place() {
    let sample = br#" {"code":"00","d\u00e9":[true,false,null,-1.5e+3,{"k":"v\n\"q"}],"data":{"amount":"1000.00","n":0,"e":{},"a":[]}} "#;
    let mut cases: Vec<Vec<u8>> = (0..=sample.len()).map(|n| sample[..n].to_vec()).collect();
    for i in 0..sample.len() {
        for b in [b'"', b'{', b'}', b'[', b']', b',', b':', b'\\', b'x', b'0', b'-', 0x01, 0xff] {
            let mut mutated = sample.to_vec();
            mutated[i] = b;
            cases.push(mutated);
        }
    }
    cases.push("[".repeat(MAX_DEPTH + 1).into_bytes());
    cases.push(format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH)).into_bytes());
    for case in &cases {
        let built = parse(case).map(drop);
        let checked = span(case).map(drop);
        assert_eq!(checked, built, "{}", String::from_utf8_lossy(case));
    }
    assert_eq!(span(b"  [1, 2]\n"), Ok(2..8));
    // A repeated key is refused where values are read, not where text is only checked.
    for repeated in [&br#"{"a":1,"a":1}"#[..], br#"[{"k":{"a":null,"a":2}}]"#] {
        assert_eq!(parse(repeated).map_err(|e| e.reason), Err(REPEATED_KEY));
        assert!(span(repeated).is_ok());
    }
}

#[test]
fn a_key_set_tells_keys_apart_by_their_whole_text_at_any_size() {
    use super::parse::KeySet;
    use std::borrow::Cow;
    // Same length, same first and last bytes: one bit of the set, two keys.
    let (a, b) = ("merchant-A-TxRef-ends", "merchant-B-TxRef-ends");
    let names: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
    let mut keys = KeySet::new();
    assert!(keys.insert(&Cow::Borrowed(a)));
    assert!(keys.insert(&Cow::Borrowed(b)));
    assert!(!keys.insert(&Cow::Borrowed(b)));
    // A key written with an escape is the same key as its plain spelling, before and after
    // the set has moved to hashing.
    assert!(!keys.insert(&Cow::Owned(a.to_owned())));
    for (i, name) in names.iter().enumerate() {
        assert!(keys.insert(&Cow::Borrowed(name.as_str())), "{name} is new");
        // Every key met so far is refused, on either side of the move to hashing.
        for seen in &names[..=i] {
            assert!(!keys.insert(&Cow::Borrowed(seen.as_str())), "{seen} after {name}");
        }
    }
    assert!(!keys.insert(&Cow::Borrowed(a)));
    assert!(!keys.insert(&Cow::Owned("k3".to_owned())));
    assert!(keys.insert(&Cow::Owned("k40".to_owned())));
    // Short keys, padded: "a" and "a\0" differ.
    let mut keys = KeySet::new();
    assert!(keys.insert(&Cow::Borrowed("a")));
    assert!(keys.insert(&Cow::Borrowed("a\0")));
    assert!(keys.insert(&Cow::Borrowed("")));
    assert!(!keys.insert(&Cow::Borrowed("")));
}

#[test]
fn a_key_set_agrees_with_a_hash_set() {
    use super::parse::KeySet;
    use std::borrow::Cow;
    use std::collections::HashSet;
    // Short keys from a small alphabet collide in the set's bits and repeat often.
    let names: Vec<String> =
        (0..200).map(|i| format!("{}{}", ["a", "ab", "ba", "aa", "b"][i % 5], i % 37)).collect();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..400 {
        let (mut keys, mut seen) = (KeySet::new(), HashSet::new());
        for _ in 0..(seed % 60) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let name = names[(seed % names.len() as u64) as usize].as_str();
            // Now and then the key comes as if written with an escape.
            let key = if seed.is_multiple_of(7) { Cow::Owned(name.to_owned()) } else { Cow::Borrowed(name) };
            assert_eq!(keys.insert(&key), seen.insert(name), "{name}");
        }
    }
}

#[test]
fn checking_without_building_accepts_exactly_what_parsing_accepts() {
    let deep_ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    let too_deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    let texts = [
        r#"{"a":1,"b":{"c":[true,null,"x\"y"],"d":-1.5e3}}"#,
        r#"{"a":{"b":1,"b":2}}"#,
        r#"{"a":[{"k":1},{"k":2,"k":3}]}"#,
        r#"{"k":1,"\u006b":2}"#,
        r#"{"a":1,}"#,
        r#"{"a":1} x"#,
        r#"[1 2]"#,
        "\"a\nb\"",
        "",
        "  {\"a\" : [ ] , \"b\" : { } }  ",
        &deep_ok,
        &too_deep,
    ];
    for text in texts {
        let parsed = parse(text.as_bytes()).map(drop).map_err(|e| (e.reason, e.line, e.column));
        let checked = check_finding(&mut Parser::new(text.as_bytes()), &[])
            .map(drop)
            .map_err(|e| (e.reason, e.line, e.column));
        assert_eq!(checked, parsed, "{text:?}");
    }
}

#[test]
fn a_value_is_located_by_its_path_and_read_as_signed() {
    let text = br#"{"event":"paid","data":{"list":[{"id":"x"}],"order":{"id":"o\"1","n":10.50,"ok":true,"none":null}},"id":"e-1"}"#;
    let at = |path: &str| {
        locate(&mut Parser::new(text), path).map(|range| String::from_utf8_lossy(&text[range]).into_owned())
    };
    assert_eq!(at("event").as_deref(), Some(r#""paid""#));
    assert_eq!(at("data.order.id").as_deref(), Some(r#""o\"1""#));
    assert_eq!(at("id").as_deref(), Some(r#""e-1""#));
    assert_eq!(at("data.list").as_deref(), Some(r#"[{"id":"x"}]"#));
    assert_eq!(at("data.list.id"), None, "a list is not an object");
    assert_eq!(at("data.order.missing"), None);
    assert_eq!(at("event.more"), None, "text is not an object");
    let mut parser = Parser::new(text);
    let mut scalar = |path: &str| {
        locate(&mut parser, path).and_then(|range| scalar_text(&mut parser, range)).map(|t| t.into_owned())
    };
    assert_eq!(scalar("data.order.id").as_deref(), Some("o\"1"));
    assert_eq!(scalar("data.order.n").as_deref(), Some("10.50"));
    assert_eq!(scalar("data.order.ok").as_deref(), Some("true"));
    assert_eq!(scalar("data.order.none"), None);
    assert_eq!(scalar("data.order"), None);
    // Found in the one checking pass, as the locator finds them one by one.
    let paths =
        ["event", "data.order.id", "id", "data.list", "data.list.id", "data.order.missing", "data.order.n"];
    let found = check_finding(&mut Parser::new(text), &paths).unwrap_or_else(|e| panic!("{e}"));
    for (path, place) in paths.iter().zip(found) {
        assert_eq!(place, locate(&mut Parser::new(text), path), "{path}");
    }
}
