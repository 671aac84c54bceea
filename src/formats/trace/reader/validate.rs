//! The rules between elements, checked once the whole file is read: every
//! reference resolves (claims to resources, dependencies to their
//! endpoints, fragments to signals), what breaks a rule is reported or,
//! leniently, dropped with what depends on it.

use super::*;

/// Checks what needs the whole file (references, offsets, signals with
/// fragments) and resolves dependency times. Problems are reported in line
/// order. Returns which elements to drop (lenient mode only).
pub(super) fn check_references(trace: &mut Trace, problems: &mut Problems) -> Result<Vec<bool>> {
    let mut findings = signals_without_fragments(trace);
    let mut resolved = Vec::new();
    for (index, e) in trace.elements.iter().enumerate() {
        let problem = match e.item {
            Item::Claim(c) => {
                let claim = &trace.claim_items[c as usize];
                claim_problem(trace, claim.resource, claim.offset.is_some())
            }
            Item::Dep(d) => {
                let dep = &trace.dep_items[d as usize];
                match resolve_dep(trace, dep.kind, dep.src, dep.dst) {
                    Ok(resolution) => {
                        resolved.push((index, d, resolution));
                        None
                    }
                    Err(msg) => Some(msg),
                }
            }
            Item::Fragment { signal, .. } => {
                let s = &trace.signals[signal as usize];
                let id = trace.text(s.id);
                (s.line == 0).then(|| format!("fragment of unknown signal {id} (no `S {id}` line)"))
            }
            Item::Event { .. } => None,
        };
        if let Some(msg) = problem {
            findings.push((e.line, msg, Some(index)));
        }
    }
    for (index, d, (times, slots)) in resolved {
        trace.elements[index].times = times;
        trace.dep_items[d as usize].resources = slots;
    }
    findings.sort_by_key(|f| f.0);
    let mut dropped = vec![false; trace.elements.len()];
    for (line, msg, index) in findings {
        problems.report(line, msg)?;
        if let Some(i) = index {
            dropped[i] = true;
        }
    }
    if dropped.contains(&true) {
        drop_dependencies_on_dropped_claims(trace, &mut dropped, problems);
    }
    Ok(dropped)
}

/// Every signal declared without a fragment.
pub(super) fn signals_without_fragments(trace: &Trace) -> Vec<Finding> {
    let bare = trace
        .signals
        .iter()
        .filter(|s| s.line != 0 && s.fragments == 0);
    bare.map(|s| {
        let id = trace.text(s.id);
        let msg = format!("signal {id} has no fragment: every signal needs at least one `F` line");
        (s.line, msg, None)
    })
    .collect()
}

/// What is wrong with a claim on `resource`, with an offset or not.
pub(super) fn claim_problem(trace: &Trace, resource: u64, has_offset: bool) -> Option<String> {
    let Some(&r) = trace.resource_index.get(&resource) else {
        return Some(format!(
            "claim on unknown resource {resource} (no `R {resource}` line)"
        ));
    };
    match (trace.resources[r as usize].uses_offset, has_offset) {
        (true, false) => Some(format!("claim offset missing: resource {resource} uses offsets, so its claims need `<offset> <amount>`")),
        (false, true) => Some(format!("unexpected claim offset: resource {resource} does not use offsets, so its claims give only `<amount>`")),
        _ => None,
    }
}

/// A dependency of type `kind` from `src` to `dst`: its endpoints' times
/// and resource slots, or why an endpoint is unknown.
pub(super) fn resolve_dep(
    trace: &Trace,
    kind: u8,
    src: TextRange,
    dst: TextRange,
) -> std::result::Result<ResolvedDep, String> {
    let (src_kind, dst_kind) = DEP_TYPES[usize::from(kind)];
    let (src_id, dst_id) = (trace.text(src), trace.text(dst));
    let (a, b) = (
        trace.endpoint(src_id, src_kind),
        trace.endpoint(dst_id, dst_kind),
    );
    if let (Some(a), Some(b)) = (a, b) {
        let slot = |r: Option<u64>| {
            r.and_then(|r| trace.resource_index.get(&r).copied())
                .unwrap_or(NO_RESOURCE)
        };
        return Ok(((a.0, b.0), [slot(a.1), slot(b.1)]));
    }
    let (which, id, k) = match a {
        None => ("source", src_id, src_kind),
        Some(_) => ("destination", dst_id, dst_kind),
    };
    Err(format!(
        "dependency {which} is an unknown {} `{id}` (type {kind} links {} to {})",
        k.noun(),
        src_kind.noun(),
        dst_kind.noun()
    ))
}

/// Drops, with a warning, each dependency that names a dropped claim
/// (lenient mode).
pub(super) fn drop_dependencies_on_dropped_claims(
    trace: &Trace,
    dropped: &mut [bool],
    problems: &Problems,
) {
    for i in 0..trace.elements.len() {
        let e = &trace.elements[i];
        let Item::Dep(d) = e.item else {
            continue;
        };
        let Dep { kind, src, dst, .. } = trace.dep_items[d as usize];
        let (sk, dk) = DEP_TYPES[usize::from(kind)];
        let gone = |id: TextRange, k: Endpoint| {
            k != Endpoint::Event
                && natural(trace.text(id), "")
                    .ok()
                    .and_then(|c| trace.claims.get(&c))
                    .is_some_and(|&c| dropped[c as usize])
        };
        if !dropped[i] && (gone(src, sk) || gone(dst, dk)) {
            problems.warn(e.line, "dependency dropped with the claim it names");
            dropped[i] = true;
        }
    }
}

impl Trace {
    /// The time of a dependency endpoint and, for a claim, its resource.
    pub(super) fn endpoint(&self, id: &str, end: Endpoint) -> Option<(i64, Option<u64>)> {
        match end {
            Endpoint::Event => {
                let (arena, elements, deps) = (&self.arena, &self.elements, &self.dep_items);
                let i = self
                    .events
                    .get(id, |i| element_id(arena, elements, deps, i))?;
                Some((self.elements[i as usize].times.0, None))
            }
            _ => {
                let &i = self.claims.get(&natural(id, "").ok()?)?;
                let e = &self.elements[i as usize];
                let t = if end == Endpoint::ClaimEnd {
                    e.times.1
                } else {
                    e.times.0
                };
                match e.item {
                    Item::Claim(c) => Some((t, Some(self.claim_items[c as usize].resource))),
                    _ => None,
                }
            }
        }
    }
}
