//! The workspace's page log: every frame the pages get, numbered, the last
//! few kept for pages that reconnect; and the outcomes of the actions
//! already applied, by the page's id.

use std::collections::{HashMap, VecDeque};

use orbit_types::{ActionAck, HostBody, HostFrame};
use tokio::sync::broadcast;

/// Frames kept for pages that resume. A page further behind gets a
/// snapshot. At about 300 bytes a frame this is a few MiB at most.
pub const RESUME_FRAMES: usize = 8192;

/// Frames a connected page may fall behind before its connection is dropped
/// (it reconnects and resumes from the log).
const LIVE_BACKLOG: usize = 4096;

/// Action outcomes remembered for resent ids.
pub const REMEMBERED_ACKS: usize = 4096;

/// The numbered frames of one workspace.
#[derive(Debug)]
pub struct PageLog {
    head: u64,
    kept: VecDeque<HostFrame>,
    capacity: usize,
    live: broadcast::Sender<HostFrame>,
}

impl PageLog {
    /// An empty log keeping the last `capacity` frames.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        let (live, _) = broadcast::channel(LIVE_BACKLOG);
        Self {
            head: 0,
            kept: VecDeque::with_capacity(capacity.min(1024)),
            capacity: capacity.max(1),
            live,
        }
    }

    /// The `seq` of the last frame (0: none yet).
    #[must_use]
    pub fn head(&self) -> u64 {
        self.head
    }

    /// Appends a frame, numbered, and sends it to every connected page.
    pub fn push(&mut self, body: HostBody) {
        self.head += 1;
        let frame = HostFrame {
            seq: Some(self.head),
            body,
        };
        if self.kept.len() == self.capacity {
            self.kept.pop_front();
        }
        // The benchmark's trace (off unless installed): the projector's output.
        orbit_common::latency_note(orbit_common::LatencyStage::Push, frame.seq, || {
            serde_json::to_string(&frame).unwrap_or_default()
        });
        self.kept.push_back(frame.clone());
        // No page connected is not an error.
        let _ = self.live.send(frame);
    }

    /// The frames after `last_seq`, when the log still holds all of them
    /// (`None`: the page is too far behind, or ahead of this log).
    #[must_use]
    pub fn since(&self, last_seq: u64) -> Option<Vec<HostFrame>> {
        if last_seq > self.head {
            return None;
        }
        let oldest = self.head + 1 - self.kept.len() as u64;
        if last_seq + 1 < oldest {
            return None;
        }
        let skip = usize::try_from(last_seq + 1 - oldest).ok()?;
        Some(self.kept.iter().skip(skip).cloned().collect())
    }

    /// A receiver of the frames pushed from now on.
    #[must_use]
    pub fn subscribe(&self) -> broadcast::Receiver<HostFrame> {
        self.live.subscribe()
    }

    /// Pages connected now.
    #[must_use]
    pub fn receivers(&self) -> usize {
        self.live.receiver_count()
    }
}

/// The outcomes of applied actions, by id; the oldest forgotten past
/// `capacity`.
#[derive(Debug)]
pub struct AckMemory {
    by_id: HashMap<String, ActionAck>,
    order: VecDeque<String>,
    capacity: usize,
}

impl AckMemory {
    /// Remembers at most `capacity` outcomes.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            by_id: HashMap::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// The outcome of `id`, if it was applied.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<&ActionAck> {
        self.by_id.get(id)
    }

    /// Remembers an outcome.
    pub fn remember(&mut self, ack: ActionAck) {
        if self.by_id.contains_key(&ack.id) {
            return;
        }
        if self.order.len() == self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            self.by_id.remove(&oldest);
        }
        self.order.push_back(ack.id.clone());
        self.by_id.insert(ack.id.clone(), ack);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orbit_types::{PageMessage, Refusal};

    fn body(n: u64) -> HostBody {
        HostBody::Page(PageMessage::Refused(Refusal {
            request: "t".into(),
            code: n.to_string(),
            message: String::new(),
        }))
    }

    #[test]
    fn resume_gives_exactly_the_missed_frames() {
        let mut log = PageLog::new(4);
        for n in 1..=6 {
            log.push(body(n));
        }
        assert_eq!(log.head(), 6);
        let seqs = |v: Vec<HostFrame>| v.into_iter().map(|f| f.seq).collect::<Vec<_>>();
        assert_eq!(seqs(log.since(6).unwrap()), Vec::<Option<u64>>::new());
        assert_eq!(seqs(log.since(4).unwrap()), vec![Some(5), Some(6)]);
        assert_eq!(
            seqs(log.since(2).unwrap()),
            vec![Some(3), Some(4), Some(5), Some(6)]
        );
        // Frame 2 is gone: a page holding only 1 is too far behind.
        assert!(log.since(1).is_none());
        assert!(log.since(0).is_none());
        // A page ahead of this log (another instance's numbers).
        assert!(log.since(7).is_none());
    }

    #[test]
    fn acks_are_remembered_and_bounded() {
        let mut acks = AckMemory::new(2);
        let ack = |id: &str, ok| ActionAck {
            id: id.into(),
            ok,
            code: None,
            message: None,
        };
        acks.remember(ack("a", true));
        acks.remember(ack("a", false));
        assert!(acks.get("a").unwrap().ok, "the first outcome stays");
        acks.remember(ack("b", true));
        acks.remember(ack("c", true));
        assert!(acks.get("a").is_none());
        assert!(acks.get("c").is_some());
    }
}
