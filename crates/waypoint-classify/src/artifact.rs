//! The model as bytes: a small little-endian format with a magic, a version and the
//! training key, so a cache file from another version or another training set is
//! recognised, and a damaged one is an error rather than a wrong model.

use crate::calibrate::{Calibration, ClassReport, Report};
use crate::features::{GramIds, Vocabulary};
use crate::head::Head;
use crate::model::Model;

const MAGIC: &[u8; 4] = b"WPCL";
/// Bumped whenever features, training or this layout change: old artifacts retrain.
pub const FORMAT: u32 = 5;

/// Why bytes are not a model.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ArtifactError {
    #[error("not a Waypoint router model (bad magic)")]
    Magic,
    #[error("router model format {found}, this build reads {FORMAT}")]
    Version { found: u32 },
    #[error("router model is truncated or damaged at byte {at}")]
    Damaged { at: usize },
}

impl Model {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(64 + self.entries.len() * 8));
        w.0.extend_from_slice(MAGIC);
        w.u32(FORMAT);
        w.0.extend_from_slice(&self.key);
        w.len(self.classes.len());
        for c in &self.classes {
            w.str(c);
        }
        for s in &self.support {
            w.u32(*s);
        }
        let mut vocab: Vec<(u64, u32)> = self.vocab.ids.iter().map(|(h, i)| (*h, *i)).collect();
        vocab.sort_unstable_by_key(|(_, i)| *i);
        w.len(vocab.len());
        for ((h, _), idf) in vocab.iter().zip(&self.vocab.idf) {
            w.u64(*h);
            w.f32(*idf);
        }
        w.len(self.dense_dims);
        for o in &self.offsets {
            w.u32(*o);
        }
        w.len(self.entries.len());
        for (k, v) in &self.entries {
            w.u32(*k);
            w.f32(*v);
        }
        for b in &self.bias {
            w.f32(*b);
        }
        for c in std::iter::once(&self.calibration).chain(&self.per_class) {
            w.f64(c.a);
            w.f64(c.b);
        }
        match &self.report {
            None => w.u32(0),
            Some(r) => {
                w.u32(1);
                w.u32(r.folds);
                w.f64(r.accuracy);
                w.u32(r.held_out);
                for c in &r.classes {
                    w.u32(c.support);
                    w.u32(c.true_positives);
                    w.u32(c.false_positives);
                    w.len(c.confused_with.len());
                    for (k, n) in &c.confused_with {
                        w.u32(*k);
                        w.u32(*n);
                    }
                }
            }
        }
        match &self.head {
            None => w.u32(0),
            Some(h) => {
                w.u32(1);
                w.len(h.dims);
                w.len(h.hidden);
                for v in h.w1.iter().chain(&h.b1).chain(&h.w2).chain(&h.b2) {
                    w.f32(*v);
                }
            }
        }
        w.0
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ArtifactError> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(4)? != MAGIC {
            return Err(ArtifactError::Magic);
        }
        let found = r.u32()?;
        if found != FORMAT {
            return Err(ArtifactError::Version { found });
        }
        let mut key = [0_u8; 32];
        key.copy_from_slice(r.take(32)?);
        let n_classes = r.len(4)?;
        let mut classes = Vec::with_capacity(n_classes);
        for _ in 0..n_classes {
            classes.push(r.str()?);
        }
        let support = (0..n_classes).map(|_| r.u32()).collect::<Result<_, _>>()?;
        let dims = r.len(12)?;
        let mut ids =
            GramIds::with_capacity_and_hasher(dims, std::hash::BuildHasherDefault::default());
        let mut idf = Vec::with_capacity(dims);
        for i in 0..dims {
            ids.insert(r.u64()?, u32::try_from(i).map_err(|_| r.damaged())?);
            idf.push(r.f32()?);
        }
        let dense_dims = r.len(4)?;
        let features = dims.checked_add(dense_dims).ok_or_else(|| r.damaged())?;
        let offsets: Vec<u32> = (0..=features).map(|_| r.u32()).collect::<Result<_, _>>()?;
        let n_entries = r.len(8)?;
        let mut entries = Vec::with_capacity(n_entries);
        for _ in 0..n_entries {
            let k = r.u32()?;
            if k as usize >= n_classes {
                return Err(r.damaged());
            }
            entries.push((k, r.f32()?));
        }
        // Offsets must be a non-decreasing walk over exactly the entries.
        if offsets.first() != Some(&0)
            || offsets.last().map(|o| *o as usize) != Some(n_entries)
            || offsets.windows(2).any(|w| w[0] > w[1])
        {
            return Err(r.damaged());
        }
        let bias = (0..n_classes).map(|_| r.f32()).collect::<Result<_, _>>()?;
        let mut calibrations = (0..=n_classes).map(|_| {
            Ok(Calibration {
                a: r.f64()?,
                b: r.f64()?,
            })
        });
        let calibration = calibrations.next().unwrap_or(Ok(Calibration::default()))?;
        let per_class = calibrations.collect::<Result<Vec<_>, ArtifactError>>()?;
        let report = read_report(&mut r, n_classes)?;
        let head = read_head(&mut r, n_classes)?;
        if r.at != bytes.len() {
            return Err(r.damaged());
        }
        Ok(Self {
            key,
            vocab: Vocabulary { ids, idf },
            rows: crate::model::dense_rows(&offsets, &entries, classes.len()),
            classes,
            offsets,
            entries,
            bias,
            calibration,
            per_class,
            report,
            support,
            dense_dims,
            head,
        })
    }
}

/// The cross-validation report, when the model has one.
fn read_report(r: &mut Reader<'_>, n_classes: usize) -> Result<Option<Report>, ArtifactError> {
    Ok(match r.u32()? {
        0 => None,
        1 => {
            let folds = r.u32()?;
            let accuracy = r.f64()?;
            let held_out = r.u32()?;
            let mut list = Vec::with_capacity(n_classes);
            for _ in 0..n_classes {
                let support = r.u32()?;
                let true_positives = r.u32()?;
                let false_positives = r.u32()?;
                let n = r.len(8)?;
                let confused_with = (0..n)
                    .map(|_| Ok((r.u32()?, r.u32()?)))
                    .collect::<Result<_, ArtifactError>>()?;
                list.push(ClassReport {
                    support,
                    true_positives,
                    false_positives,
                    confused_with,
                });
            }
            Some(Report {
                folds,
                accuracy,
                held_out,
                classes: list,
            })
        }
        _ => return Err(r.damaged()),
    })
}

/// The network over dense vectors, when the model has one.
fn read_head(r: &mut Reader<'_>, n_classes: usize) -> Result<Option<Head>, ArtifactError> {
    Ok(match r.u32()? {
        0 => None,
        1 => {
            let dims = r.len(4)?;
            let hidden = r.len(4)?;
            let (Some(n1), Some(n2)) = (dims.checked_mul(hidden), hidden.checked_mul(n_classes))
            else {
                return Err(r.damaged());
            };
            let w1 = r.f32s(n1)?;
            let b1 = r.f32s(hidden)?;
            let w2 = r.f32s(n2)?;
            let b2 = r.f32s(n_classes)?;
            Some(Head {
                dims,
                hidden,
                classes: n_classes,
                w1,
                b1,
                w2,
                b2,
            })
        }
        _ => return Err(r.damaged()),
    })
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn damaged(&self) -> ArtifactError {
        ArtifactError::Damaged { at: self.at }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], ArtifactError> {
        let end = self.at.checked_add(n).ok_or(self.damaged())?;
        let s = self.bytes.get(self.at..end).ok_or(self.damaged())?;
        self.at = end;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], ArtifactError> {
        let mut a = [0_u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32, ArtifactError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, ArtifactError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn f32(&mut self) -> Result<f32, ArtifactError> {
        Ok(f32::from_le_bytes(self.array()?))
    }
    fn f64(&mut self) -> Result<f64, ArtifactError> {
        Ok(f64::from_le_bytes(self.array()?))
    }
    /// A count of items of at least `item` bytes each: never more than the bytes left
    /// could hold, so a damaged count cannot make us allocate without bound.
    fn len(&mut self, item: usize) -> Result<usize, ArtifactError> {
        let n = usize::try_from(self.u64()?).map_err(|_| self.damaged())?;
        if n.saturating_mul(item.max(1)) > self.bytes.len() - self.at {
            return Err(self.damaged());
        }
        Ok(n)
    }
    /// `n` floats, refused before reading when fewer bytes are left.
    fn f32s(&mut self, n: usize) -> Result<Vec<f32>, ArtifactError> {
        if n.saturating_mul(4) > self.bytes.len() - self.at {
            return Err(self.damaged());
        }
        (0..n).map(|_| self.f32()).collect()
    }
    fn str(&mut self) -> Result<String, ArtifactError> {
        let n = self.len(1)?;
        let s = self.take(n)?;
        String::from_utf8(s.to_vec()).map_err(|_| self.damaged())
    }
}
