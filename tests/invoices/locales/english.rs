//! What English invoices share, wherever they come from: month names and a few labels.

pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
pub const MONTHS_SHORT: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
pub const DESCRIPTION: &[&str] = &["Description", "Item Description", "Service", "Details"];
pub const QTY: &[&str] = &["Qty", "Quantity", "Units"];
pub const THANKS: &[&str] = &[
    "Thank you for your business!",
    "We appreciate your business.",
    "Thank you!",
];
pub const EMAIL: &[&str] = &["Email", "E-mail"];
pub const WEB: &[&str] = &["Web", "Website"];
pub const NONE: &[&str] = &[];
