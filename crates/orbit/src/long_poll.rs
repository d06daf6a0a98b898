//! The control socket's long polls (`orbit.page.next`, `orbit.ask.next`):
//! a queue a background task fills and a caller empties, waiting up to
//! `timeoutMs` for the first item. One copy of the rules both relays keep:
//! the `timeoutMs` parse and its cap, the wait registered before the queue
//! is looked at (an item pushed in between is not lost), the batch, and
//! the end answered only once the queue is empty.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use orbit_control::ControlFailure;
use serde_json::Value;
use tokio::sync::Notify;

/// The longest a long poll waits for its first item.
pub(crate) const MAX_POLL: Duration = Duration::from_secs(25);

/// How long a long poll's `timeoutMs` asks to wait (none: not at all), at
/// most [`MAX_POLL`].
pub(crate) fn poll_wait(params: &Value) -> Result<Duration, ControlFailure> {
    let wait = match params.get("timeoutMs") {
        None | Some(Value::Null) => Duration::ZERO,
        Some(ms) => Duration::from_millis(ms.as_u64().ok_or_else(|| {
            ControlFailure::new("invalid_params", "`timeoutMs` must be a whole number")
        })?),
    };
    Ok(wait.min(MAX_POLL))
}

struct State<T, E> {
    items: VecDeque<T>,
    ended: Option<E>,
}

/// A relayed page connection or a joined `orbit ask` turn nobody polled
/// for this long is dropped (its extension host or its `orbit ask` went
/// away without closing it).
pub(crate) const ABANDONED: Duration = Duration::from_mins(1);

/// A relayed connection's (or a joined `orbit ask` turn's) long-poll
/// bookkeeping: when it was last polled, and the task forwarding its
/// frames.
pub(crate) struct Polled {
    last_poll: Mutex<Instant>,
    forward: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Polled {
    pub(crate) fn new() -> Self {
        Self {
            last_poll: Mutex::new(Instant::now()),
            forward: Mutex::new(None),
        }
    }

    /// Polled now.
    pub(crate) fn touch(&self) {
        *self
            .last_poll
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    /// Nobody polled for [`ABANDONED`].
    pub(crate) fn abandoned(&self, now: Instant) -> bool {
        let last = *self
            .last_poll
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        now.saturating_duration_since(last) >= ABANDONED
    }

    /// `task` forwards the frames from now on.
    pub(crate) fn forwarding(&self, task: tokio::task::JoinHandle<()>) {
        *self.forward.lock().unwrap_or_else(PoisonError::into_inner) = Some(task);
    }

    /// The forwarding stops.
    pub(crate) fn stop_forwarding(&self) {
        if let Some(task) = self
            .forward
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            task.abort();
        }
    }
}

/// A long-polled queue of `T`, which ends once, for a reason `E`.
pub(crate) struct PollQueue<T, E> {
    state: Mutex<State<T, E>>,
    ready: Notify,
    /// Past this many queued items the queue ends as `overflow` (its items
    /// dropped) instead of holding more.
    limit: Option<(usize, E)>,
    /// At most this many items are answered by one poll.
    batch: usize,
}

impl<T, E: Copy> PollQueue<T, E> {
    /// A queue that holds whatever comes and answers all of it at once.
    pub(crate) fn unbounded() -> Self {
        Self::new(None, usize::MAX)
    }

    /// A queue that ends as `overflow` once more than `max_queued` items
    /// wait, and answers at most `batch` items a poll.
    pub(crate) fn bounded(max_queued: usize, overflow: E, batch: usize) -> Self {
        Self::new(Some((max_queued, overflow)), batch)
    }

    fn new(limit: Option<(usize, E)>, batch: usize) -> Self {
        Self {
            state: Mutex::new(State {
                items: VecDeque::new(),
                ended: None,
            }),
            ready: Notify::new(),
            limit,
            batch: batch.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<T, E>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `item`, unless the queue ended.
    pub(crate) fn push(&self, item: T) {
        let mut state = self.lock();
        if state.ended.is_some() {
            return;
        }
        match self.limit {
            Some((max, overflow)) if state.items.len() >= max => {
                state.items.clear();
                state.ended = Some(overflow);
            }
            _ => state.items.push_back(item),
        }
        drop(state);
        self.ready.notify_one();
    }

    /// The queue ends (the first reason stays): what it holds is still
    /// answered, then the end.
    pub(crate) fn end(&self, why: E) {
        let mut state = self.lock();
        if state.ended.is_none() {
            state.ended = Some(why);
        }
        drop(state);
        self.ready.notify_one();
    }
}

/// What one poll answers: the items taken, and the end once the queue has
/// ended and nothing is left in it.
pub(crate) type Batch<T, E> = (Vec<T>, Option<E>);

/// Waits up to `wait` for `queue` to hold anything (an item or its end),
/// then takes a batch: nothing (and no end) when the wait ran out.
pub(crate) async fn long_poll<T, E: Copy>(queue: &PollQueue<T, E>, wait: Duration) -> Batch<T, E> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        // Registered before looking: a push in between is not lost.
        let ready = queue.ready.notified();
        {
            let mut state = queue.lock();
            if !state.items.is_empty() || state.ended.is_some() {
                let take = state.items.len().min(queue.batch);
                let items: Vec<T> = state.items.drain(..take).collect();
                let ended = if state.items.is_empty() {
                    state.ended
                } else {
                    None
                };
                return (items, ended);
            }
        }
        if tokio::time::timeout_at(deadline, ready).await.is_err() {
            return (Vec::new(), None);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Why {
        Full,
        Gone,
    }

    #[test]
    fn timeout_ms_is_a_whole_number_capped_at_the_longest_poll() {
        assert_eq!(poll_wait(&json!({})).unwrap(), Duration::ZERO);
        assert_eq!(
            poll_wait(&json!({"timeoutMs": null})).unwrap(),
            Duration::ZERO
        );
        assert_eq!(
            poll_wait(&json!({"timeoutMs": 300})).unwrap(),
            Duration::from_millis(300)
        );
        assert_eq!(
            poll_wait(&json!({"timeoutMs": 3_600_000})).unwrap(),
            MAX_POLL
        );
        for bad in [json!(-1), json!(1.5), json!("300")] {
            let error = poll_wait(&json!({ "timeoutMs": bad })).unwrap_err();
            assert_eq!(error.code, "invalid_params", "{bad}");
            assert!(error.message.contains("`timeoutMs`"), "{bad}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_poll_answers_in_batches_and_the_end_after_the_last() {
        let queue = PollQueue::bounded(100, Why::Full, 2);
        for n in 0..3 {
            queue.push(n);
        }
        queue.end(Why::Gone);
        queue.end(Why::Full);
        queue.push(9);
        assert_eq!(long_poll(&queue, Duration::ZERO).await, (vec![0, 1], None));
        assert_eq!(
            long_poll(&queue, Duration::ZERO).await,
            (vec![2], Some(Why::Gone))
        );
        // Ended and empty: every later poll answers the end at once.
        assert_eq!(long_poll(&queue, MAX_POLL).await, (vec![], Some(Why::Gone)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_queue_past_its_limit_ends_as_overflow_dropping_what_it_held() {
        let queue = PollQueue::bounded(2, Why::Full, 10);
        for n in 0..3 {
            queue.push(n);
        }
        assert_eq!(
            long_poll(&queue, Duration::ZERO).await,
            (vec![], Some(Why::Full))
        );
        let unbounded = PollQueue::<u32, ()>::unbounded();
        for n in 0..10_000 {
            unbounded.push(n);
        }
        let (items, ended) = long_poll(&unbounded, Duration::ZERO).await;
        assert_eq!((items.len(), ended), (10_000, None));
    }

    #[tokio::test(start_paused = true)]
    async fn an_empty_poll_waits_for_its_time_then_answers_nothing() {
        let queue = PollQueue::<u32, Why>::unbounded();
        let started = tokio::time::Instant::now();
        assert_eq!(
            long_poll(&queue, Duration::from_secs(3)).await,
            (vec![], None)
        );
        assert_eq!(started.elapsed(), Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn a_push_during_the_wait_answers_the_poll_at_once() {
        let queue = Arc::new(PollQueue::<u32, Why>::unbounded());
        let pusher = Arc::clone(&queue);
        let started = tokio::time::Instant::now();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            pusher.push(7);
        });
        assert_eq!(long_poll(&queue, MAX_POLL).await, (vec![7], None));
        assert_eq!(started.elapsed(), Duration::from_secs(1));
        let ender = Arc::clone(&queue);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            ender.end(Why::Gone);
        });
        assert_eq!(long_poll(&queue, MAX_POLL).await, (vec![], Some(Why::Gone)));
        assert_eq!(started.elapsed(), Duration::from_secs(3));
    }
}
