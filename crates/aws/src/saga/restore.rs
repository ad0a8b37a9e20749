//! The compensation of a promotion on the documents table: the previous run becomes current
//! again (or, when there was none, the document has no current result), only while the current
//! one is still the run being compensated ([`RESTORE_CONDITION`]). Written as an item of the
//! store's transaction, with the journal's `committed` and the audit entry.

use aws_sdk_dynamodb::types::{Delete, TransactWriteItem, Update};
use docket_core::ids::{DocumentId, RunId};
use docket_core::saga::PreviousResult;

use crate::item::s;

/// The condition of a restore: the run being compensated is still the current one.
pub const RESTORE_CONDITION: &str = "currentRunId = :run";

/// The transaction item that restores `previous` as `document`'s current result in `table`
/// (deletes the document's record when `previous` is `None`), refused unless `run` is current.
/// A `retracted` run is named in the restored record (`retractedRunId`).
pub fn item(
    table: &str,
    document: &DocumentId,
    run: &RunId,
    previous: Option<&PreviousResult>,
    retracted: bool,
) -> TransactWriteItem {
    let key = s(document.as_str());
    match previous {
        Some(p) => {
            let expression = match retracted {
                true => "SET currentRunId = :previous, sourceOrder = :order, retractedRunId = :run",
                false => "SET currentRunId = :previous, sourceOrder = :order REMOVE retractedRunId",
            };
            let update = Update::builder()
                .table_name(table)
                .key("documentId", key)
                .update_expression(expression)
                .condition_expression(RESTORE_CONDITION)
                .expression_attribute_values(":run", s(run.as_str()))
                .expression_attribute_values(":previous", s(p.run_id.as_str()))
                .expression_attribute_values(":order", s(&p.source_order))
                .build()
                .expect("complete update");
            TransactWriteItem::builder().update(update).build()
        }
        None => {
            let delete = Delete::builder()
                .table_name(table)
                .key("documentId", key)
                .condition_expression(RESTORE_CONDITION)
                .expression_attribute_values(":run", s(run.as_str()))
                .build()
                .expect("complete delete");
            TransactWriteItem::builder().delete(delete).build()
        }
    }
}
