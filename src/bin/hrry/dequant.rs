//! `hrry dequant`: dequantize one tensor to a float32 `.npy` file and/or print
//! statistics. Works in row chunks, so tensors larger than memory stream through.

use std::io::Write;
use std::path::PathBuf;

use hrry::file::{Output, OutputError};
use hrry::quant::{Dequantizer, QuantError};

use crate::{text, Failure, Outcome};

/// Values per chunk (4 MiB of float32).
const CHUNK: usize = 1 << 20;

/// Arguments of `hrry dequant`.
#[derive(clap::Args)]
pub struct Args {
    /// The Hurray file.
    file: PathBuf,
    /// The name of the quantized tensor.
    tensor: String,
    /// Write the dequantized values to this float32 `.npy` file (logical row-major
    /// order, the tensor's shape). A block-paged tensor gives its whole page pool
    /// instead: shape [num_pages * page_size, heads, head_dim], pages in pool order.
    #[arg(short, long, value_name = "OUT.npy")]
    output: Option<PathBuf>,
    /// Print min, max, mean and count of the dequantized values.
    #[arg(long)]
    stats: bool,
    /// Print the statistics as JSON.
    #[arg(long, requires = "stats")]
    json: bool,
}

/// Running statistics over the dequantized values.
#[derive(Default)]
struct Stats {
    count: u64,
    nan: u64,
    min: Option<f32>,
    max: Option<f32>,
    sum: f64,
}

impl Stats {
    fn add(&mut self, values: &[f32]) {
        for &v in values {
            self.count += 1;
            if v.is_nan() {
                self.nan += 1;
                continue;
            }
            self.min = Some(self.min.map_or(v, |m| m.min(v)));
            self.max = Some(self.max.map_or(v, |m| m.max(v)));
            self.sum += f64::from(v);
        }
    }

    fn mean(&self) -> Option<f64> {
        let n = self.count - self.nan;
        (n > 0).then(|| self.sum / n as f64)
    }
}

pub fn run(args: Args) -> Result<Outcome, Failure> {
    if args.output.is_none() && !args.stats {
        return Err(Failure("dequant needs -o OUT.npy, --stats, or both".into()));
    }
    if args.stats && args.output.as_deref().is_some_and(crate::is_dash) {
        return Err(Failure(
            "--stats prints to standard output, so -o - cannot be used with it".into(),
        ));
    }
    let Some(file) = crate::open_hrry(&args.file)? else {
        return Ok(Outcome::Invalid);
    };
    let what = format!("{} {:?}", text::path(&args.file), args.tensor);
    let tensor = match file.tensor(&args.tensor) {
        Ok(Some(t)) => t,
        Ok(None) => return Err(Failure(format!("{what}: no tensor of that name"))),
        Err(hrry::file::Error::Io(e)) => return Err(Failure(format!("cannot read {what}: {e}"))),
        Err(e) => {
            eprintln!("{what}: {}", text::safe(&e.to_string()));
            return Ok(Outcome::Invalid);
        }
    };
    let dq = match Dequantizer::new(tensor.descriptor, &tensor.buffers) {
        Ok(dq) => dq,
        Err(e) => return quant_failure(&what, e),
    };

    let mut out = match &args.output {
        Some(path) => {
            crate::output_folder(path)?;
            let mut w = Output::create(path, &[&args.file]).map_err(crate::output_failure)?;
            w.write_all(&hrry::npy::header(hrry::npy::FLOAT32.descr, dq.shape()))
                .map_err(|e| write_failure(path, e))?;
            Some(w)
        }
        None => None,
    };
    let mut stats = Stats::default();
    let mut write = |values: &[f32]| -> Result<(), Failure> {
        if let (Some(w), Some(path)) = (out.as_mut(), &args.output) {
            hrry::npy::write_f32_data(w, values).map_err(|e| write_failure(path, e))?;
        }
        if args.stats {
            stats.add(values);
        }
        Ok(())
    };
    if dq.row_len() == 0 || dq.is_empty() {
        // Nothing to write after the header.
    } else {
        let chunks = match dq.row_chunks(CHUNK) {
            Ok(chunks) => chunks,
            Err(e) => return quant_failure(&what, e),
        };
        for (_, values) in chunks {
            write(&values)?;
        }
    }
    if let Some(w) = out {
        w.commit().map_err(crate::output_failure)?;
    }
    if args.stats {
        let num = |v: Option<f64>| v.map_or(serde_json::Value::Null, |x| serde_json::json!(x));
        if args.json {
            let v = serde_json::json!({
                "tensor": args.tensor,
                "shape": dq.shape(),
                "count": stats.count,
                "nan_count": stats.nan,
                "min": num(stats.min.map(f64::from)),
                "max": num(stats.max.map(f64::from)),
                "mean": num(stats.mean()),
            });
            outln!("{}", serde_json::to_string_pretty(&v)?);
        } else {
            let show = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x}"));
            outln!(
                "tensor {} shape {:?}",
                text::safe(&format!("{:?}", args.tensor)),
                dq.shape()
            );
            outln!("count {}", stats.count);
            outln!("min   {}", show(stats.min.map(f64::from)));
            outln!("max   {}", show(stats.max.map(f64::from)));
            outln!("mean  {}", show(stats.mean()));
            if stats.nan > 0 {
                outln!("nan   {}", stats.nan);
            }
        }
    }
    Ok(Outcome::Ok)
}

/// A tensor that cannot be dequantized: broken quantization rules, or a tensor this
/// command does not handle (not quantized, an unsupported layout) is exit 1, as for
/// any input the command cannot process; anything else is a usage error.
fn quant_failure(what: &str, e: QuantError) -> Result<Outcome, Failure> {
    match e {
        QuantError::NotQuantized => {
            eprintln!(
                "{what}: not a quantized tensor, so there is nothing to dequantize; \
                 `hrry export FILE TENSOR -o OUT.npy` writes its values"
            );
            Ok(Outcome::Invalid)
        }
        QuantError::Invalid(_) | QuantError::Unsupported(_) => {
            eprintln!("{what}: {}", text::safe(&e.to_string()));
            Ok(Outcome::Invalid)
        }
        e => Err(Failure(format!("{what}: {e}"))),
    }
}

fn write_failure(path: &std::path::Path, source: std::io::Error) -> Failure {
    crate::output_failure(OutputError::Io {
        path: path.to_path_buf(),
        source,
    })
}
