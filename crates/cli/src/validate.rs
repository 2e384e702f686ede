//! `deltaload validate`: files read and parsed as a load would, nothing written.

use crate::args::ValidateArgs;
use crate::output::out;
use deltaload_core::Spec;
use std::process::ExitCode;

pub(crate) fn run(args: ValidateArgs, spec: &Spec) -> anyhow::Result<ExitCode> {
    let chosen = spec.select(None).map_err(anyhow::Error::msg)?;
    // Checked against the expectations as a load would (a file that breaks
    // a `fail` one would be refused, a `drop` one's records rejected).
    let (dataset, check) = deltaload_lake::expectations_check(chosen)?;
    let dataset = dataset.as_ref();
    let (mut flawed, mut failed) = (false, false);
    for path in &args.files {
        let shown = path.display().to_string();
        // Validating reads each file whole, one at a time.
        let mut room = u64::MAX;
        let file =
            match crate::load::read(path, &deltaload_lake::MemoryBudget::unlimited(), &mut room) {
                Ok(file) => file,
                Err(e) => {
                    eprintln!("{shown}: {e}");
                    failed = true;
                    continue;
                }
            };
        let parsed = match deltaload_lake::read_changes(dataset, &shown, &file.bytes, &*check)? {
            Ok(parsed) => parsed,
            Err(refused) => {
                out!("{shown}: would be refused: {refused}");
                flawed = true;
                continue;
            }
        };
        let loaded = parsed.loaded as usize;
        let distinct = parsed.newest.num_rows();
        let deletes = match dataset.delete_when {
            Some(_) => format!(" ({} deletes)", parsed.deletes),
            None => String::new(),
        };
        out!(
            "{shown}: {} records, {loaded} valid{deletes}, {} rejected, {} duplicate keys (dataset {})",
            loaded + parsed.rejects.len(),
            parsed.rejects.len(),
            loaded - distinct,
            dataset.name
        );
        for r in parsed.rejects.iter().take(args.rejects) {
            out!("  line {}: {}", r.line, r.reason);
        }
        if parsed.rejects.len() > args.rejects {
            out!(
                "  ... and {} more (--rejects N shows more)",
                parsed.rejects.len() - args.rejects
            );
        }
        flawed |= !parsed.rejects.is_empty();
    }
    Ok(if failed {
        ExitCode::from(1)
    } else if flawed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
