//! `hrry dequant`: dequantize one tensor to a float32 `.npy` file and/or print
//! statistics. Works in row chunks, so tensors larger than memory stream through.

use std::io::Write;
use std::path::PathBuf;

use hrry::file::OutputError;
use hrry::quant::Dequantizer;

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
    /// Print min, max, mean and count of the dequantized values; of a float
    /// tensor that is not quantized, of its values as stored (bfloat16 and the
    /// narrow floats widened exactly).
    #[arg(long)]
    stats: bool,
    /// Print the statistics as JSON.
    #[arg(long, requires = "stats")]
    json: bool,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
    /// Whether hrry's hardening rules refuse the file too (`hardened`), or only the
    /// spec's rules and resource limits (`spec`).
    #[arg(long, value_enum, value_name = "POLICY", default_value = "hardened")]
    policy: crate::PolicyArg,
}

/// Running statistics over the dequantized values.
#[derive(Default)]
struct Stats {
    count: u64,
    nan: u64,
    min: Option<f64>,
    max: Option<f64>,
    sum: f64,
}

impl Stats {
    fn add(&mut self, values: &[f32]) {
        for &v in values {
            self.add_one(f64::from(v));
        }
    }

    fn add_one(&mut self, v: f64) {
        self.count += 1;
        if v.is_nan() {
            self.nan += 1;
            return;
        }
        self.min = Some(self.min.map_or(v, |m| m.min(v)));
        self.max = Some(self.max.map_or(v, |m| m.max(v)));
        self.sum += v;
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
    let Some(file) = crate::open_hrry(&args.file, args.policy)? else {
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
    // Statistics of a float tensor's own values are still useful.
    if tensor.descriptor.quantization.is_none() && args.output.is_none() {
        return stored_stats(&args, &file, &what);
    }
    let dq = match Dequantizer::new(tensor.descriptor, &tensor.buffers) {
        Ok(dq) => dq,
        Err(e) => return quant_failure(&what, tensor.descriptor, e),
    };

    let mut out = match &args.output {
        Some(path) => {
            crate::output_folder(path)?;
            let mut w =
                crate::output::create(path, &[&args.file]).map_err(crate::output_failure)?;
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
            Err(e) => return quant_failure(&what, tensor.descriptor, e),
        };
        for (_, values) in chunks {
            write(&values)?;
        }
    }
    if let Some(w) = out {
        w.commit().map_err(crate::output_failure)?;
    }
    if args.stats {
        print_stats(&args, dq.shape(), &stats, None)?;
    }
    Ok(Outcome::Ok)
}

/// Prints `stats` of the tensor of `shape`; `stored` names the element type of an
/// unquantized tensor, whose values as stored were counted.
fn print_stats(
    args: &Args,
    shape: &[u64],
    stats: &Stats,
    stored: Option<&str>,
) -> Result<(), Failure> {
    let num = |v: Option<f64>| v.map_or(serde_json::Value::Null, |x| serde_json::json!(x));
    if args.json {
        let mut v = serde_json::json!({
            "tensor": args.tensor,
            "shape": shape,
            "count": stats.count,
            "nan_count": stats.nan,
            "min": num(stats.min),
            "max": num(stats.max),
            "mean": num(stats.mean()),
        });
        if let Some(ty) = stored {
            v["quantized"] = serde_json::json!(false);
            v["element_type"] = serde_json::json!(ty);
        }
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let show = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x}"));
        outln!(
            "tensor {} shape {:?}{}",
            text::safe(&format!("{:?}", args.tensor)),
            shape,
            stored.map_or(String::new(), |ty| format!(
                " ({ty}, not quantized: its values as stored)"
            ))
        );
        outln!("count {}", stats.count);
        outln!("min   {}", show(stats.min));
        outln!("max   {}", show(stats.max));
        outln!("mean  {}", show(stats.mean()));
        if stats.nan > 0 {
            outln!("nan   {}", stats.nan);
        }
    }
    Ok(())
}

/// `--stats` of a tensor that is not quantized: its values as `hrry export`
/// writes them (floats only; bfloat16 and the narrow floats widened exactly),
/// read in row-major order a piece at a time.
fn stored_stats(
    args: &Args,
    file: &hrry::file::HrryFile<'_>,
    what: &str,
) -> Result<Outcome, Failure> {
    use hrry::export::{export_dtype, export_row_major, ExportOptions};
    let Ok(Some(tensor)) = file.tensor(&args.tensor) else {
        return Err(Failure(format!("{what}: no tensor of that name")));
    };
    let desc = tensor.descriptor;
    let type_name = hrry::model::ElementType::from_tag(desc.type_tag).map_or_else(
        || format!("type {:#04x}", desc.type_tag),
        |t| t.name().to_string(),
    );
    let dtype = match export_dtype(desc) {
        Ok(d) if matches!(d.descr, "<f2" | "<f4" | "<f8") => d,
        _ => {
            eprintln!(
                "{what}: not a quantized tensor, and its type {type_name} is not a float, so \
                 --stats has nothing to report; `hrry export FILE TENSOR -o OUT.npy` writes \
                 its values"
            );
            return Ok(Outcome::Invalid);
        }
    };
    let mut sink = StatsSink {
        item_size: dtype.item_size,
        pending: Vec::new(),
        stats: Stats::default(),
    };
    match export_row_major(file, &args.tensor, &mut sink, &ExportOptions::default()) {
        Ok(_) => {}
        Err(hrry::Error::Io(e)) => return Err(Failure(format!("cannot read {what}: {e}"))),
        Err(e) => {
            eprintln!("{what}: {}", text::safe(&e.to_string()));
            return Ok(Outcome::Invalid);
        }
    }
    print_stats(args, &desc.shape, &sink.stats, Some(&type_name))?;
    Ok(Outcome::Ok)
}

/// A `Write` taking little-endian floats of `item_size` bytes (2, 4 or 8) into
/// [`Stats`], an element cut between two writes included.
struct StatsSink {
    item_size: usize,
    pending: Vec<u8>,
    stats: Stats,
}

impl StatsSink {
    fn value(&self, bytes: &[u8]) -> f64 {
        match *bytes {
            [a, b] => f64::from(half::f16::from_le_bytes([a, b])),
            [a, b, c, d] => f64::from(f32::from_le_bytes([a, b, c, d])),
            _ => bytes.try_into().map_or(f64::NAN, f64::from_le_bytes),
        }
    }
}

impl Write for StatsSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // First complete the element the previous write cut, then take whole
        // elements straight from `buf` (never copied), keeping the tail.
        let mut rest = buf;
        if !self.pending.is_empty() {
            let take = (self.item_size - self.pending.len()).min(rest.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() < self.item_size {
                return Ok(buf.len());
            }
            let v = self.value(&self.pending);
            self.stats.add_one(v);
            self.pending.clear();
        }
        let items = rest.chunks_exact(self.item_size);
        self.pending.extend_from_slice(items.remainder());
        for item in items {
            let v = self.value(item);
            self.stats.add_one(v);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A tensor that cannot be dequantized: broken quantization rules, or a tensor this
/// command does not handle (not quantized, an unsupported layout) is exit 1, as for
/// any input the command cannot process; anything else is a usage error.
fn quant_failure(
    what: &str,
    desc: &hrry::schema::TensorDescriptor,
    e: hrry::Error,
) -> Result<Outcome, Failure> {
    match e {
        _ if desc.quantization.is_none() => {
            eprintln!(
                "{what}: not a quantized tensor, so there is nothing to dequantize; \
                 `hrry export FILE TENSOR -o OUT.npy` writes its values"
            );
            Ok(Outcome::Invalid)
        }
        hrry::Error::Invalid(_) | hrry::Error::Unsupported(_) => {
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
