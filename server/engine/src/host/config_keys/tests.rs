//! The table of keys and the reader agree both ways. The reader's keys are
//! found by tracing the serde structs it reads a file into (a deserializer that
//! records each struct's field names as it walks them), so a key added to the
//! reader and not to [`KEYS`] fails here.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::de::value::{BorrowedStrDeserializer, Error, SeqDeserializer, StrDeserializer};
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::super::config::Config;
use super::super::layers::{File, LIMIT_KEYS};
use super::{Table, KEYS};

/// The field names of each struct met, by path (`model.*`: any model's table).
type Seen = RefCell<BTreeMap<String, Vec<&'static str>>>;

/// A deserializer that gives every struct all its fields, each with a made-up
/// value, and records the field names.
struct Tracer<'a> {
    seen: &'a Seen,
    path: String,
}

impl<'a> Tracer<'a> {
    fn at(&self, path: String) -> Tracer<'a> {
        Tracer {
            seen: self.seen,
            path,
        }
    }
}

/// The entries of one struct (every field) or one map (a single entry `NAME`).
struct Entries<'a> {
    tracer: Tracer<'a>,
    keys: Vec<&'static str>,
    /// True for a map: its values are at `PATH.*`; a struct's at `PATH.FIELD`
    /// (toml's `Spanned` wrapper keeps its value at the same path).
    map: bool,
    spanned: bool,
    next: usize,
}

impl<'de> MapAccess<'de> for Entries<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(key) = self.keys.get(self.next) else {
            return Ok(None);
        };
        seed.deserialize(BorrowedStrDeserializer::<Error>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let key = self.keys[self.next];
        self.next += 1;
        let base = &self.tracer.path;
        let path = match (self.map, self.spanned) {
            (true, _) => format!("{base}.*").trim_start_matches('.').to_owned(),
            (false, true) => base.clone(),
            (false, false) => format!("{base}.{key}").trim_start_matches('.').to_owned(),
        };
        if self.spanned && (key.ends_with("start") || key.ends_with("end")) {
            return seed.deserialize(0u64.into_deserializer());
        }
        seed.deserialize(self.tracer.at(path))
    }
}

impl<'de> de::Deserializer<'de> for Tracer<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_bool(true)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(1)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u32(1)
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str("x")
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str("x")
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(SeqDeserializer::new(std::iter::empty::<u64>()))
    }
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(Entries {
            tracer: self,
            keys: vec!["NAME"],
            map: true,
            spanned: false,
            next: 0,
        })
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let spanned = name.starts_with("$__");
        if !spanned {
            self.seen
                .borrow_mut()
                .insert(self.path.clone(), fields.to_vec());
        }
        visitor.visit_map(Entries {
            tracer: self,
            keys: fields.to_vec(),
            map: false,
            spanned,
            next: 0,
        })
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(StrDeserializer::<Error>::new(variants[0]))
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str("x")
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u128 f32 f64 char bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct ignored_any
    }
}

/// The keys the reader reads, by table.
fn reader_keys() -> BTreeMap<&'static str, BTreeSet<&'static str>> {
    let seen = Seen::default();
    File::deserialize(Tracer {
        seen: &seen,
        path: String::new(),
    })
    .expect("the tracer walks the whole file");
    let seen = seen.into_inner();
    let tables = ["model", "plugin", "web", "limits", "trace", "test"];
    let mut out = BTreeMap::new();
    out.insert(
        "",
        seen[""]
            .iter()
            .copied()
            .filter(|k| !tables.contains(k))
            .collect(),
    );
    out.insert("[model.NAME]", seen["model.*"].iter().copied().collect());
    out.insert(
        "[plugin.\"ns/name\"]",
        seen["plugin.*"].iter().copied().collect(),
    );
    out.insert("[web]", seen["web"].iter().copied().collect());
    out.insert("[limits]", LIMIT_KEYS.iter().copied().collect());
    out.insert("[trace]", seen["trace"].iter().copied().collect());
    out.insert("[test]", seen["test"].iter().copied().collect());
    out
}

fn table_keys() -> BTreeMap<&'static str, BTreeSet<&'static str>> {
    let mut out: BTreeMap<&'static str, BTreeSet<&'static str>> = BTreeMap::new();
    for k in KEYS {
        out.entry(k.table.header()).or_default().insert(k.key);
    }
    out
}

#[test]
fn the_table_names_exactly_the_keys_the_reader_reads() {
    assert_eq!(table_keys(), reader_keys());
}

/// A file that sets `key` (in `table`) to `value`, with what its table needs.
fn file_setting(table: Table, key: &str, value: &str) -> String {
    match table {
        Table::Top => format!("{key} = {value}\n"),
        Table::Model if key == "provider" => format!("[model.m]\n{key} = {value}\n"),
        Table::Model if key == "path" => {
            format!("[model.m]\nprovider = \"script\"\n{key} = {value}\n")
        }
        Table::Model => format!("[model.m]\nprovider = \"openai\"\n{key} = {value}\n"),
        Table::Plugin if key == "command" => format!("[plugin.\"acme/x\"]\n{key} = {value}\n"),
        Table::Plugin => format!("[plugin.\"acme/x\"]\ncommand = \"x\"\n{key} = {value}\n"),
        Table::Web => format!("[web]\n{key} = {value}\n"),
        Table::Limits => format!("[limits]\n{key} = {value}\n"),
        Table::Trace => format!("[trace]\n{key} = {value}\n"),
        Table::Test => format!("[test]\n{key} = {value}\n"),
    }
}

#[test]
fn every_key_of_the_table_is_read_with_its_example_and_a_misspelling_is_refused() {
    let path = Path::new("conf/promptforge.toml");
    for k in KEYS {
        let text = file_setting(k.table, k.key, k.example);
        if let Err(e) = Config::parse(&text, path) {
            panic!("{} {}: {text:?} is refused: {e:?}", k.table.header(), k.key);
        }
        let misspelled = file_setting(k.table, &format!("{}x", k.key), k.example);
        assert!(
            Config::parse(&misspelled, path).is_err(),
            "{misspelled:?} is read"
        );
    }
}

#[test]
fn the_defaults_are_the_readers() {
    let defaults = Config::default();
    let text = |key: &str| {
        KEYS.iter()
            .find(|k| k.key == key)
            .map(|k| k.default.text())
            .unwrap_or_default()
    };
    assert_eq!(text("call_depth"), defaults.limits.call_depth.to_string());
    assert_eq!(text("store_bytes"), defaults.limits.store_bytes.to_string());
    assert_eq!(text("timeout_s"), "120");
    assert_eq!(text("max_fetch_bytes"), "2097152");
}
