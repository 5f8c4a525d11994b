//! Lists the tensors of the HRRYFILE named on the command line, through the crate
//! root's API only.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).ok_or("usage: hrry-downstream FILE")?;
    let file = hrry::HrryFile::open(std::path::Path::new(&path))?;
    for entry in file.entries() {
        let t = file.tensor(entry.name())?.ok_or("listed but not found")?;
        println!("{} {:?} {:?}", t.name(), t.element_type(), t.shape());
    }
    let strict = hrry::OpenOptions::new()
        .judging(hrry::Judging::new(hrry::Rules::Hardened, hrry::Depth::Data))
        .open(std::path::Path::new(&path));
    if let Err(e) = strict {
        println!("strict validation refuses it: {e}");
    }
    Ok(())
}
