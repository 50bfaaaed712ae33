//! What a set of texts' vectors share, taken out of each.
//!
//! Static vectors of texts from one catalog share a large common part (every entry is a
//! tool, a service, a thing to book or find; every request says "what", "my", "can you"),
//! which says nothing of which one a text is and makes the wordiest texts near every
//! other. Comparing vectors less the set's mean compares what sets them apart.

/// The mean of a set of vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct Centre {
    mean: Vec<f32>,
}

impl Centre {
    /// The mean of `rows`, each `dims` long (a row of another length is left out).
    pub fn of<'r>(rows: impl IntoIterator<Item = &'r [f32]>, dims: usize) -> Self {
        let mut mean = vec![0.0_f32; dims];
        let mut n = 0_u32;
        for row in rows.into_iter().filter(|r| r.len() == dims) {
            for (m, x) in mean.iter_mut().zip(row) {
                *m += x;
            }
            n += 1;
        }
        if n > 0 {
            #[expect(
                clippy::cast_precision_loss,
                reason = "a count of texts, far below 2^24"
            )]
            let n = n as f32;
            for m in &mut mean {
                *m /= n;
            }
        }
        Self { mean }
    }

    /// `v` less the mean, scaled back to length one (left as it is where nothing
    /// remains).
    pub fn apply(&self, v: &mut [f32]) {
        for (x, m) in v.iter_mut().zip(&self.mean) {
            *x -= m;
        }
        unit(v);
    }

    /// `v` less its part along the mean, scaled back to length one: for a text from
    /// another set than the rows (a request against descriptions), which has the rows'
    /// common part only as far as it points their way. Taking the whole mean out of it
    /// would push it away from what the rows share by as much as it lacks it.
    pub fn project_out(&self, v: &mut [f32]) {
        let squared: f32 = self.mean.iter().map(|m| m * m).sum();
        if squared > f32::EPSILON {
            let along = v.iter().zip(&self.mean).map(|(x, m)| x * m).sum::<f32>() / squared;
            for (x, m) in v.iter_mut().zip(&self.mean) {
                *x -= along * m;
            }
        }
        unit(v);
    }
}

/// `v` scaled to length one, left as it is where it is (nearly) zero.
pub fn unit(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > f32::EPSILON {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_every_row_shares_is_taken_out() {
        let rows = [vec![1.0, 1.0, 0.0], vec![1.0, 0.0, 1.0]];
        let centre = Centre::of(rows.iter().map(Vec::as_slice), 3);
        let mut a = rows[0].clone();
        centre.apply(&mut a);
        // Less the mean (1, 0.5, 0.5): (0, 0.5, -0.5), at length one.
        let h = 0.5_f32.sqrt();
        assert!(a[0].abs() < 1e-6 && (a[1] - h).abs() < 1e-6 && (a[2] + h).abs() < 1e-6);
        // The mean itself leaves nothing, and is left as it is.
        let mut m = vec![1.0, 0.5, 0.5];
        centre.apply(&mut m);
        assert_eq!(m, [0.0, 0.0, 0.0]);
        // No rows: a zero mean, and a row of the wrong length is left out.
        let none = Centre::of([[1.0_f32].as_slice()], 3);
        let mut v = vec![3.0, 4.0, 0.0];
        none.apply(&mut v);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
    }

    #[test]
    fn a_text_of_another_set_loses_only_its_part_along_the_mean() {
        let rows = [vec![1.0, 1.0, 0.0], vec![1.0, -1.0, 0.0]];
        let centre = Centre::of(rows.iter().map(Vec::as_slice), 3);
        // The mean is (1, 0, 0): (2, 0, 1) keeps (0, 0, 1), where less the mean it
        // would be (1, 0, 1) at length one.
        let mut v = vec![2.0, 0.0, 1.0];
        centre.project_out(&mut v);
        assert!(v[0].abs() < 1e-6 && v[1].abs() < 1e-6 && (v[2] - 1.0).abs() < 1e-6);
        // A text opposite the mean loses it too, rather than gaining more of it.
        let mut w = vec![-3.0, 4.0, 0.0];
        centre.project_out(&mut w);
        assert!(w[0].abs() < 1e-6 && (w[1] - 1.0).abs() < 1e-6);
        // A zero mean leaves the text as it is, at length one.
        let zero = Centre::of(std::iter::empty::<&[f32]>(), 2);
        let mut z = vec![3.0, 4.0];
        zero.project_out(&mut z);
        assert!((z[0] - 0.6).abs() < 1e-6 && (z[1] - 0.8).abs() < 1e-6);
    }
}
