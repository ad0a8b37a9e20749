//! The cost model: AWS's list prices in one place, and what a measured usage costs per 1,000
//! documents, orchestration and OCR apart. `make bench` applies it to what it counted; SCALE.md
//! quotes it. Prices are us-east-1, on demand, without free tiers, as read on [`PRICES_READ`]
//! from each price's `source`; change a price here and every figure follows.
//!
//! Modelling choices, each an upper bound for a one-page invoice:
//! - a DynamoDB write costs one write unit per item (items under 1 KB), a transactional write
//!   two per item; a read one read unit per item or Query (strongly consistent, under 4 KB);
//! - Lambda duration is what the functions billed where they were measured (the local
//!   executor's debug builds on a shared machine are slower than AWS's release builds), at the
//!   memory the template gives them, on arm64;
//! - S3 and SNS/SQS requests are counted at the wire.

/// The day the prices below were read.
pub const PRICES_READ: &str = "2026-12-03";

/// One list price: `usd` for `per` units of `unit`.
#[derive(Debug, Clone, Copy)]
pub struct Price {
    pub usd: f64,
    pub per: f64,
    pub unit: &'static str,
    pub source: &'static str,
}

impl Price {
    pub fn of(&self, units: f64) -> f64 {
        self.usd * units / self.per
    }
}

pub const STEP_FUNCTIONS_TRANSITION: Price = Price {
    usd: 0.025,
    per: 1_000.0,
    unit: "Standard state transition",
    source: "https://aws.amazon.com/step-functions/pricing/",
};
pub const LAMBDA_REQUEST: Price = Price {
    usd: 0.20,
    per: 1_000_000.0,
    unit: "Lambda request",
    source: "https://aws.amazon.com/lambda/pricing/",
};
pub const LAMBDA_GB_SECOND_ARM64: Price = Price {
    usd: 0.000_013_333_4,
    per: 1.0,
    unit: "Lambda GB-second (arm64)",
    source: "https://aws.amazon.com/lambda/pricing/",
};
pub const DYNAMODB_WRITE_UNIT: Price = Price {
    usd: 0.625,
    per: 1_000_000.0,
    unit: "DynamoDB on-demand write request unit",
    source: "https://aws.amazon.com/dynamodb/pricing/on-demand/",
};
pub const DYNAMODB_READ_UNIT: Price = Price {
    usd: 0.125,
    per: 1_000_000.0,
    unit: "DynamoDB on-demand read request unit",
    source: "https://aws.amazon.com/dynamodb/pricing/on-demand/",
};
pub const S3_PUT: Price = Price {
    usd: 0.005,
    per: 1_000.0,
    unit: "S3 Standard PUT, COPY, POST or LIST request",
    source: "https://aws.amazon.com/s3/pricing/",
};
pub const S3_GET: Price = Price {
    usd: 0.000_4,
    per: 1_000.0,
    unit: "S3 Standard GET or other request",
    source: "https://aws.amazon.com/s3/pricing/",
};
pub const SNS_PUBLISH: Price = Price {
    usd: 0.50,
    per: 1_000_000.0,
    unit: "SNS standard topic publish (deliveries to Lambda are free)",
    source: "https://aws.amazon.com/sns/pricing/",
};
pub const SQS_REQUEST: Price = Price {
    usd: 0.40,
    per: 1_000_000.0,
    unit: "SQS standard queue request",
    source: "https://aws.amazon.com/sqs/pricing/",
};
pub const EVENTBRIDGE_EVENT: Price = Price {
    usd: 1.00,
    per: 1_000_000.0,
    unit: "EventBridge custom event published (S3's events to the default bus are free)",
    source: "https://aws.amazon.com/eventbridge/pricing/",
};
pub const TEXTRACT_PAGE: Price = Price {
    usd: 1.50,
    per: 1_000.0,
    unit: "Textract DetectDocumentText page (first million a month)",
    source: "https://aws.amazon.com/textract/pricing/",
};

/// What one document used, on average. Every field is a count per document.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub transitions: f64,
    pub lambda_requests: f64,
    pub lambda_gb_seconds: f64,
    pub dynamodb_write_units: f64,
    pub dynamodb_read_units: f64,
    pub s3_puts: f64,
    pub s3_gets: f64,
    pub sns_publishes: f64,
    pub sqs_requests: f64,
    pub events_published: f64,
    pub textract_pages: f64,
}

/// One line of a bill: what, how many per document, and dollars per 1,000 documents.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub unit: &'static str,
    pub per_document: f64,
    pub usd_per_thousand: f64,
}

/// Dollars per 1,000 documents: the orchestration (everything but OCR) and the OCR.
#[derive(Debug, Clone)]
pub struct Bill {
    pub orchestration: Vec<Line>,
    pub ocr: Vec<Line>,
}

impl Bill {
    pub fn orchestration_usd(&self) -> f64 {
        self.orchestration.iter().map(|l| l.usd_per_thousand).sum()
    }

    pub fn ocr_usd(&self) -> f64 {
        self.ocr.iter().map(|l| l.usd_per_thousand).sum()
    }

    /// The bill as `bench:` lines.
    pub fn print(&self, what: &str) {
        println!(
            "bench: cost per 1,000 {what} (prices of {PRICES_READ}, us-east-1): orchestration \
             ${:.4}, OCR ${:.4}",
            self.orchestration_usd(),
            self.ocr_usd()
        );
        for line in self.orchestration.iter().chain(&self.ocr) {
            println!(
                "bench:   {:>9.3} x {} per document: ${:.4}",
                line.per_document, line.unit, line.usd_per_thousand
            );
        }
    }
}

impl Usage {
    pub fn bill(&self) -> Bill {
        let line = |price: Price, per_document: f64| Line {
            unit: price.unit,
            per_document,
            usd_per_thousand: price.of(per_document * 1_000.0),
        };
        Bill {
            orchestration: vec![
                line(STEP_FUNCTIONS_TRANSITION, self.transitions),
                line(LAMBDA_REQUEST, self.lambda_requests),
                line(LAMBDA_GB_SECOND_ARM64, self.lambda_gb_seconds),
                line(DYNAMODB_WRITE_UNIT, self.dynamodb_write_units),
                line(DYNAMODB_READ_UNIT, self.dynamodb_read_units),
                line(S3_PUT, self.s3_puts),
                line(S3_GET, self.s3_gets),
                line(SNS_PUBLISH, self.sns_publishes),
                line(SQS_REQUEST, self.sqs_requests),
                line(EVENTBRIDGE_EVENT, self.events_published),
            ],
            ocr: vec![line(TEXTRACT_PAGE, self.textract_pages)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_transitions_a_document_cost_twenty_cents_a_thousand() {
        let bill = Usage {
            transitions: 8.0,
            ..Usage::default()
        }
        .bill();
        assert!((bill.orchestration_usd() - 0.20).abs() < 1e-9);
        assert_eq!(bill.ocr_usd(), 0.0);
    }

    #[test]
    fn a_page_a_document_costs_textracts_dollar_fifty_a_thousand_as_ocr() {
        let bill = Usage {
            textract_pages: 1.0,
            lambda_requests: 5.0,
            ..Usage::default()
        }
        .bill();
        assert!((bill.ocr_usd() - 1.50).abs() < 1e-9);
        assert!((bill.orchestration_usd() - 0.001).abs() < 1e-9);
    }

    #[test]
    fn every_usage_field_has_a_line() {
        let ones = Usage {
            transitions: 1.0,
            lambda_requests: 1.0,
            lambda_gb_seconds: 1.0,
            dynamodb_write_units: 1.0,
            dynamodb_read_units: 1.0,
            s3_puts: 1.0,
            s3_gets: 1.0,
            sns_publishes: 1.0,
            sqs_requests: 1.0,
            events_published: 1.0,
            textract_pages: 1.0,
        }
        .bill();
        let lines = ones.orchestration.iter().chain(&ones.ocr);
        assert!(lines.clone().all(|l| l.usd_per_thousand > 0.0));
        assert_eq!(lines.count(), 11);
    }
}
