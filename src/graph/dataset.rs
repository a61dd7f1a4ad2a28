//! The shapes of the graphs that GNN systems on UPMEM are evaluated on (PyGim: Reddit, AmazonProducts,
//! ogbn-arxiv, ogbn-proteins; GNNear: Reddit, ogbn-products), to generate stand-ins of their real size.

use super::power_law::{power_law, Direction};
use crate::error::{Error, Result};
use crate::sparse::Csr;

/// A published dataset whose shape [`Dataset::graph`] reproduces (parsed in any case).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, strum::Display, strum::EnumString, strum::VariantNames, strum::EnumIter,
)]
#[strum(serialize_all = "kebab-case", ascii_case_insensitive)]
#[strum(parse_err_ty = Error, parse_err_fn = Error::not_one_of::<Self>)]
pub enum Dataset {
    /// Reddit (GraphSAGE; PyTorch Geometric's `Reddit`): posts linked when one user commented on both.
    Reddit,
    /// AmazonProducts (GraphSAINT; PyTorch Geometric's `AmazonProducts`).
    AmazonProducts,
    /// ogbn-products (OGB): Amazon's co-purchasing network.
    Products,
    /// ogbn-proteins (OGB): protein associations.
    Proteins,
    /// ogbn-arxiv (OGB): citations between arXiv CS papers.
    Arxiv,
}

/// A dataset's published size: what a generated stand-in has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatasetShape {
    /// Nodes.
    pub nodes: usize,
    /// Nonzeros of the adjacency matrix: PyTorch Geometric's `edge_index` length, which holds an undirected
    /// graph's edges in both directions.
    pub edges: usize,
    /// Node feature width.
    pub features: usize,
    /// Classes (for ogbn-proteins, its 112 binary tasks).
    pub classes: usize,
    /// Whether the matrix is symmetric.
    pub direction: Direction,
    /// Where the figures are published.
    pub source: &'static str,
}

impl Dataset {
    /// The dataset's published shape.
    pub fn shape(self) -> DatasetShape {
        use Direction::{Directed, Undirected};
        let (nodes, edges, features, classes, direction, source) = match self {
            Dataset::Reddit => (232_965, 114_615_892, 602, 41, Undirected, "PyTorch Geometric, datasets.Reddit"),
            Dataset::AmazonProducts => {
                (1_569_960, 264_339_468, 200, 107, Undirected, "PyTorch Geometric, datasets.AmazonProducts")
            }
            // OGB publishes undirected edge counts (61,859,140 and 39,561,252); its loaders store both directions.
            Dataset::Products => (2_449_029, 123_718_280, 100, 47, Undirected, "OGB, ogbn-products"),
            // The nodes carry no features; the 8 features of the edges are what models aggregate onto them.
            Dataset::Proteins => (132_534, 79_122_504, 8, 112, Undirected, "OGB, ogbn-proteins"),
            Dataset::Arxiv => (169_343, 1_166_243, 128, 40, Directed, "OGB, ogbn-arxiv"),
        };
        DatasetShape { nodes, edges, features, classes, direction, source }
    }

    /// A graph of the dataset's nodes and edges with a power-law degree distribution ([`power_law`]), seeded.
    pub fn graph(self, seed: u64) -> Result<Csr<f32>> {
        let shape = self.shape();
        power_law(shape.nodes, shape.edges, seed, shape.direction)
    }
}

#[cfg(test)]
mod tests {
    use strum::IntoEnumIterator;

    use super::*;

    #[test]
    fn names_parse_in_any_case_and_unknown_ones_list_the_choices() {
        for dataset in Dataset::iter() {
            assert_eq!(dataset.to_string().to_uppercase().parse::<Dataset>().unwrap(), dataset);
        }
        assert_eq!("amazon-products".parse::<Dataset>().unwrap(), Dataset::AmazonProducts);
        let error = "cora".parse::<Dataset>().unwrap_err().to_string();
        assert!(error.contains("reddit") && error.contains("arxiv"), "{error}");
    }

    #[test]
    fn undirected_shapes_have_whole_pairs() {
        for dataset in Dataset::iter() {
            let shape = dataset.shape();
            assert!(shape.direction == Direction::Directed || shape.edges % 2 == 0, "{dataset}");
            assert!(shape.edges as u64 <= u64::from(u32::MAX) && shape.nodes < 1 << 32);
        }
    }
}
