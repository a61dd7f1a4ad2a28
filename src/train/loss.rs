//! Cross-entropy over a node mask, as `F.cross_entropy(logits[mask], labels[mask])`: log-softmax, then the mean
//! negative log-likelihood over the selected nodes.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::sparse::Dense;

/// The nodes a loss is computed over and their labels, checked against the graph and the model once.
#[derive(Clone, Debug, PartialEq)]
pub struct Targets {
    labels: Vec<i64>,
    mask: Vec<bool>,
    selected: usize,
    classes: usize,
}

impl Targets {
    /// `labels` (one per node) of the nodes `mask` selects, for a graph of `nodes` nodes and a model of
    /// `classes` outputs. Every selected node's label must be in `0..classes`; unselected nodes' labels are
    /// not read (they may be `-1` for "unlabelled").
    pub fn new(labels: Vec<i64>, mask: Vec<bool>, nodes: usize, classes: usize) -> Result<Self> {
        if labels.len() != nodes {
            return Err(Error::shape("labels (one per node of the graph)", nodes, labels.len()));
        }
        if mask.len() != nodes {
            return Err(Error::shape("training mask (one entry per node of the graph)", nodes, mask.len()));
        }
        check_labels(&labels, &mask, classes)?;
        let selected = mask.iter().filter(|&&m| m).count();
        if selected == 0 {
            return Err(Error::invalid("training mask", "selects no node"));
        }
        Ok(Targets { labels, mask, selected, classes })
    }

    /// One rank's targets in distributed training: the `labels` and `mask` of its nodes (its mask may select
    /// none), with the loss averaged over the `selected_overall` nodes that all ranks' masks select, so that the
    /// ranks' losses and gradients sum to the whole graph's.
    pub fn of_rank(labels: Vec<i64>, mask: Vec<bool>, classes: usize, selected_overall: usize) -> Result<Self> {
        if mask.len() != labels.len() {
            return Err(Error::shape("training mask (one entry per node of the rank)", labels.len(), mask.len()));
        }
        check_labels(&labels, &mask, classes)?;
        let selected_here = mask.iter().filter(|&&m| m).count();
        if selected_overall == 0 {
            return Err(Error::invalid("training mask", "selects no node on any rank"));
        }
        if selected_here > selected_overall {
            return Err(Error::invalid(
                "training nodes over all ranks",
                format!("{selected_overall}, fewer than the rank's own {selected_here}"),
            ));
        }
        Ok(Targets { labels, mask, selected: selected_overall, classes })
    }

    /// The labels, one per node.
    pub fn labels(&self) -> &[i64] {
        &self.labels
    }

    /// The mask, one entry per node.
    pub fn mask(&self) -> &[bool] {
        &self.mask
    }

    /// The number of classes.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// How many nodes the mask selects (over all ranks, for [`Targets::of_rank`]'s): the loss is their mean.
    pub fn selected(&self) -> usize {
        self.selected
    }
}

/// Checks that every node `mask` selects has a label in `0..classes`.
fn check_labels(labels: &[i64], mask: &[bool], classes: usize) -> Result<()> {
    match labels.iter().enumerate().find(|&(node, &label)| mask[node] && !(0..classes as i64).contains(&label)) {
        Some((node, &label)) => Err(Error::IndexOutOfRange {
            what: format!("label {label} of training node {node} (the model's classes)"),
            index: label as u64,
            limit: classes as u64,
        }),
        None => Ok(()),
    }
}

/// The mean cross-entropy of the selected nodes' `logits` against their labels, and its gradient with respect
/// to `logits` (`(softmax - one_hot) / selected` on selected rows, zero elsewhere).
pub fn cross_entropy(logits: &Dense<f32>, targets: &Targets) -> Result<(f32, Dense<f32>)> {
    if (logits.rows(), logits.cols()) != (targets.labels.len(), targets.classes) {
        return Err(Error::shape(
            "logits (nodes x classes)",
            format!("{} x {}", targets.labels.len(), targets.classes),
            format!("{} x {}", logits.rows(), logits.cols()),
        ));
    }
    let classes = targets.classes;
    let scale = 1.0 / targets.selected as f64;
    let mut gradient = Dense::zeros(logits.rows(), classes);
    // Each row in f64: the loss of one node, and its gradient row written in place.
    let total: f64 = gradient
        .as_mut_slice()
        .par_chunks_mut(classes.max(1))
        .zip(logits.as_slice().par_chunks(classes.max(1)))
        .enumerate()
        .filter(|(node, _)| targets.mask[*node])
        .map(|(node, (grad, row))| {
            let largest = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
            let sum: f64 = row.iter().map(|&v| (f64::from(v) - largest).exp()).sum();
            let log_sum = largest + sum.ln();
            let label = targets.labels[node] as usize;
            for (class, (g, &v)) in grad.iter_mut().zip(row).enumerate() {
                let probability = (f64::from(v) - log_sum).exp();
                let one_hot = if class == label { 1.0 } else { 0.0 };
                *g = ((probability - one_hot) * scale) as f32;
            }
            log_sum - f64::from(row[label])
        })
        .sum();
    Ok(((total * scale) as f32, gradient))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_formula_on_selected_nodes_only() {
        let logits = Dense::from_vec(3, 2, vec![1.0, 2.0, 0.0, 0.0, 5.0, -5.0]).unwrap();
        let targets = Targets::new(vec![1, 0, 7], vec![true, true, false], 3, 2).unwrap();
        let (loss, gradient) = cross_entropy(&logits, &targets).unwrap();
        let first = (1.0f64.exp() + 2.0f64.exp()).ln() - 2.0;
        let second = 2.0f64.ln();
        assert!((f64::from(loss) - (first + second) / 2.0).abs() < 1e-6);
        let p = 1.0 / (1.0 + 1.0f64.exp());
        let expected = [p / 2.0, (1.0 - p - 1.0) / 2.0, (0.5 - 1.0) / 2.0, 0.25, 0.0, 0.0];
        for (g, e) in gradient.as_slice().iter().zip(expected) {
            assert!((f64::from(*g) - e).abs() < 1e-6, "{g} against {e}");
        }
    }

    #[test]
    fn malformed_targets_are_refused() {
        // Each variant has its own message form, so the message names the variant, the input and the limit.
        let failure = |targets: Result<Targets>| targets.expect_err("accepted").to_string();
        assert_eq!(
            failure(Targets::new(vec![0, 1], vec![true, true], 3, 2)),
            "shape mismatch in labels (one per node of the graph): expected 3, found 2"
        );
        assert_eq!(
            failure(Targets::new(vec![0, 1, 1], vec![true], 3, 2)),
            "shape mismatch in training mask (one entry per node of the graph): expected 3, found 1"
        );
        assert_eq!(
            failure(Targets::new(vec![0, 2, 1], vec![true, true, false], 3, 2)),
            "label 2 of training node 1 (the model's classes): index 2 out of range (limit 2)"
        );
        assert_eq!(
            failure(Targets::new(vec![0, 1, 1], vec![false; 3], 3, 2)),
            "invalid training mask: selects no node"
        );
    }
}
