//! REFERENCES edges: a symbol names another without calling it. Today: what a test refers
//! to (a type, a constant, a function passed as a value) is noted as tested.

use super::FileOut;
use super::scope::Index;
use super::tested_by::Tested;

pub(super) fn edges(index: &Index<'_>, out: &mut FileOut<'_>, tested: &mut Tested) {
    let (file, file_index) = (out.file, out.file_index);
    for reference in &file.references {
        if reference.from < 0 || !file.symbols[reference.from as usize].test {
            continue;
        }
        let found = index
            .resolve_plain(file_index, reference.from, &reference.name, 0)
            .or_else(|| index.resolve_type(file_index, reference.from, &reference.name));
        if let Some(found) = found
            && !index.symbol(found).test
        {
            let from = index.ids[file_index][reference.from as usize].clone();
            tested.note(index.id(found), &from, reference.line);
        }
    }
}
