//! The maps and sets planning reads: keyed by words, stems and ids, looked up for every
//! token of every clause, so their hash is a large share of a plan's time. foldhash is
//! several times faster than the standard library's `SipHash` on short keys and still
//! seeds each map at random, so a request cannot choose words that collide.

pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;
