//! The matcher's unit tests.

use super::*;

struct Collect(Vec<Record>);
impl RecordSink for Collect {
    fn write(&mut self, rec: &Record) -> Result<()> {
        self.0.push(rec.clone());
        Ok(())
    }
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

thread_local! {
    static SYMBOLS: Symbols = Symbols::new();
}

fn symbols() -> Symbols {
    SYMBOLS.with(Symbols::clone)
}

fn sym(text: &str) -> Sym {
    symbols().intern(text)
}

fn matcher(unmatched: Unmatched, warnings: Warnings) -> Matcher<Collect> {
    Matcher::new(Collect(Vec::new()), unmatched, symbols(), warnings)
}

fn half(kind: Kind, t: i64, loc: &str, peer: &str, tag: Option<i64>, id: &str) -> Record {
    let mut r = Record::new(kind);
    r.time = Some(t);
    r.loc = sym(loc);
    r.peer = sym(peer);
    r.tag = tag;
    r.id = id.into();
    r
}

#[test]
fn tagged_halves_match_fifo_per_channel() {
    let mut m = matcher(Unmatched::Drop, Warnings::default());
    for r in [
        half(Kind::Send, 1, "a", "b", Some(1), ""),
        half(Kind::Send, 2, "a", "b", Some(1), ""),
        half(Kind::Send, 3, "a", "b", Some(2), ""),
        half(Kind::Recv, 4, "b", "a", Some(2), ""),
        half(Kind::Recv, 5, "b", "a", Some(1), ""),
        half(Kind::Recv, 6, "b", "a", Some(1), ""),
    ] {
        m.write(&r).unwrap();
    }
    m.finish().unwrap();
    let got: Vec<(i64, i64, i64)> = m
        .next
        .0
        .iter()
        .map(|r| (r.time.unwrap(), r.end.unwrap(), r.tag.unwrap()))
        .collect();
    assert_eq!(got, vec![(3, 4, 2), (1, 5, 1), (2, 6, 1)]);
}

#[test]
fn keyed_halves_pair_by_their_whole_key() {
    // Keys of one length, tagged halves beside them: only the same key pairs.
    let mut m = matcher(Unmatched::Keep, Warnings::default());
    for r in [
        half(Kind::Send, 1, "p1", "", None, "k1"),
        half(Kind::Send, 2, "p1", "", None, "k2"),
        half(Kind::Send, 3, "p1", "p2", Some(7), ""),
        half(Kind::Recv, 4, "p2", "", None, "k2"),
        half(Kind::Recv, 5, "p2", "", None, "k1"),
        half(Kind::Recv, 6, "p2", "p1", Some(8), ""),
    ] {
        m.write(&r).unwrap();
    }
    m.finish().unwrap();
    let got: Vec<(Kind, i64, Option<i64>, String)> = m
        .next
        .0
        .iter()
        .map(|r| (r.kind, r.time.unwrap(), r.end, r.id.clone()))
        .collect();
    let msg = |t, end, id: &str| (Kind::Msg, t, Some(end), id.to_string());
    assert_eq!(got[..2], [msg(2, 4, "k2"), msg(1, 5, "k1")]);
    assert_eq!(got.len(), 4, "the tagged halves (tags 7 and 8) stay apart");
}

#[test]
fn keyed_halves_match_in_either_order_and_keep_leftovers() {
    let mut m = matcher(Unmatched::Keep, Warnings::default());
    let mut recv_first = half(Kind::Recv, 5, "p2", "", None, "k1");
    recv_first.attrs = "got=1".into();
    let mut send = half(Kind::Send, 6, "p1", "", None, "k1");
    send.attrs = "size=1024".into();
    m.write(&recv_first).unwrap();
    m.write(&send).unwrap();
    m.write(&half(Kind::Send, 7, "p1", "", None, "k2")).unwrap();
    m.finish().unwrap();
    let out = &m.next.0;
    assert_eq!(out[0].kind, Kind::Msg);
    assert_eq!((out[0].time, out[0].end), (Some(6), Some(5)));
    assert_eq!((out[0].loc, out[0].peer), (sym("p1"), sym("p2")));
    assert_eq!(out[0].flags, "R");
    assert_eq!(out[0].attrs, "got=1;size=1024");
    assert_eq!(out[1].kind, Kind::Send);
    assert_eq!(out[1].flags, "U");
}

fn destroy(t: i64, loc: &str) -> Record {
    let mut r = Record::new(Kind::Destroy);
    r.time = Some(t);
    r.loc = sym(loc);
    r
}

#[test]
fn halves_waiting_on_a_destroyed_location_are_released() {
    let (warnings, seen) = Warnings::collecting();
    let mut m = matcher(Unmatched::Keep, warnings);
    // 1000 receivers each get a send that never arrives, then die: the
    // matcher does not keep them to the end.
    for i in 0..1000 {
        m.write(&half(Kind::Send, i, "a", &format!("r{i}"), Some(0), ""))
            .unwrap();
    }
    // A keyed half waits on its link container, here one that lives on.
    let mut keyed = half(Kind::Send, 1000, "a", "", None, "k");
    keyed.comm = sym("root");
    m.write(&keyed).unwrap();
    for i in 0..1000 {
        m.write(&destroy(2000 + i, &format!("r{i}"))).unwrap();
    }
    assert!(m.pending_halves <= 501, "{}", m.pending_halves);
    assert!(m.pending.len() <= 501);
    m.write(&destroy(3000, "root")).unwrap();
    assert_eq!((m.pending_halves, m.pending.len()), (0, 0));
    m.finish().unwrap();
    let out = &m.next.0;
    let unmatched: Vec<&Record> = out.iter().filter(|r| r.kind == Kind::Send).collect();
    assert_eq!(unmatched.len(), 1001);
    assert!(unmatched.iter().all(|r| r.flags == "U"));
    // Written when released, in time order, with their own time kept.
    assert!(out.windows(2).all(|w| w[0].time <= w[1].time));
    assert_eq!(unmatched[0].attr("orig_time").as_deref(), Some("0"));
    let msgs: Vec<String> = seen.lock().unwrap().iter().map(|w| w.msg.clone()).collect();
    assert_eq!(
        msgs,
        ["1001 message half/halves never matched (1001 send, 0 recv); written flagged U"]
    );
}

#[test]
fn a_name_used_again_does_not_lose_its_new_halves() {
    let mut m = matcher(Unmatched::Drop, Warnings::default());
    m.write(&half(Kind::Send, 1, "a", "b", Some(0), ""))
        .unwrap();
    m.write(&half(Kind::Send, 2, "c", "b", Some(0), ""))
        .unwrap();
    // Halves waiting on a live location keep the dead ones from being
    // swept at the destruction.
    for t in 0..3 {
        m.write(&half(Kind::Send, 2, "a", "z", Some(t), ""))
            .unwrap();
    }
    m.write(&destroy(3, "b")).unwrap();
    assert_eq!(m.pending_halves, 5);
    let mut again = Record::new(Kind::Container);
    again.time = Some(4);
    again.loc = sym("b");
    m.write(&again).unwrap();
    m.write(&half(Kind::Send, 5, "a", "b", Some(0), ""))
        .unwrap();
    m.write(&half(Kind::Recv, 6, "b", "a", Some(0), ""))
        .unwrap();
    m.finish().unwrap();
    let msgs: Vec<(i64, i64)> = m
        .next
        .0
        .iter()
        .filter(|r| r.kind == Kind::Msg)
        .map(|r| (r.time.unwrap(), r.end.unwrap()))
        .collect();
    assert_eq!(msgs, [(5, 6)]);
}

#[test]
fn channels_are_equal_exactly_when_their_fields_are() {
    use std::hash::BuildHasher;
    let hasher = crate::fasthash::FastMap::<Channel, ()>::default();
    let hash = |c: &Channel| hasher.hasher().hash_one(c);
    let channel = |r: &Record| {
        let mut c = Channel::default();
        c.set(r);
        c
    };
    let k1 = channel(&half(Kind::Send, 1, "p1", "", None, "k1"));
    let k2 = channel(&half(Kind::Recv, 2, "p2", "", None, "k2"));
    let k1_again = channel(&half(Kind::Recv, 3, "p2", "", None, "k1"));
    let tagged = channel(&half(Kind::Send, 4, "p1", "p2", Some(7), ""));
    let tagged_again = channel(&half(Kind::Recv, 5, "p2", "p1", Some(7), ""));
    assert_ne!(k1, k2, "keys of one length that differ");
    assert_eq!(k1, k1_again);
    assert_eq!(hash(&k1), hash(&k1_again));
    assert_eq!(tagged, tagged_again);
    assert_eq!(hash(&tagged), hash(&tagged_again));
    assert_ne!(tagged, k1);
    let keyless = Channel {
        id: String::new(),
        ..k1.clone()
    };
    assert_ne!(keyless, k1, "an empty key is not any key");
    assert_ne!(k1, keyless);
}

#[test]
fn halves_left_at_one_time_come_out_in_the_order_they_arrived() {
    // A matcher behind the pipeline (a sink) hears no marks: halves of one
    // time must still come out as they came in, whatever channel each
    // waits on, so writing a stream again gives it back unchanged.
    let peers: Vec<String> = (0..64).map(|i| format!("r{}", (i * 37 + 5) % 64)).collect();
    let mut m = matcher(Unmatched::Keep, Warnings::default());
    for peer in &peers {
        m.write(&half(Kind::Send, 5, "a", peer, Some(0), ""))
            .unwrap();
    }
    m.finish().unwrap();
    let out: Vec<Sym> = m.next.0.iter().map(|r| r.peer).collect();
    assert_eq!(out, peers.iter().map(|p| sym(p)).collect::<Vec<_>>());

    let mut m = matcher(Unmatched::Error, Warnings::default());
    for peer in &peers {
        m.write(&half(Kind::Send, 5, "a", peer, Some(0), ""))
            .unwrap();
    }
    let err = m.finish().unwrap_err().to_string();
    // The first to arrive is named.
    assert!(
        err.starts_with("a `send` of channel a -> r5 comm  tag 0 never matched"),
        "{err}"
    );
}
