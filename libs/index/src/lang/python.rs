use tree_sitter::Node as SyntaxNode;

use super::Builder;
use crate::layout::Layout;

pub fn extract(_root: SyntaxNode<'_>, _b: &mut Builder<'_>, _layout: &Layout) {}
