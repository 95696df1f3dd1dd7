//! What flowlet schemes (LetFlow, CONGA) report about their flowlets: how many began, how many
//! of them moved their flow to another path (the run's `reroutes`), and, when the scheme's
//! `events` is on, each one as a load-balancer event (`lb_events.csv`: `flowlet` with the old
//! and new path), so that flowlets and reroutes can be plotted over time. Counting costs two
//! additions per new flowlet; events cost nothing unless asked for.
//!
//! Only data packets' flowlets are counted (a scheme that also switches ACKs by flowlet does
//! so in the other direction, which moves no data). A path is the flowlet's choice as the
//! scheme sees it: the ToR-to-ToR path index at a source ToR, the port's place among the
//! candidates at a switch that chooses its own port. A flow's first flowlet has no old path:
//! its event gives the new one as both, and it is no reroute.
use super::SwitchCtx;
use crate::lb::LbEvent;

/// The event of a flowlet beginning (`lb_events.csv`), naming its old and new path.
pub const FLOWLET: &str = "flowlet";

/// Flowlet counts of a run, and the switch for recording each flowlet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowletLog {
    /// Record every flowlet as an event.
    events: bool,
    /// Flowlets begun (data packets).
    flowlets: u64,
    /// Flowlets that took another path than the flow's previous one.
    reroutes: u64,
}

impl FlowletLog {
    /// A log that records events when `events` is set.
    pub fn new(events: bool) -> Self {
        FlowletLog {
            events,
            ..Default::default()
        }
    }

    /// A flowlet of connection `flow` began on path `new`; `old` is the path of its previous
    /// flowlet at this decision point (`None`: its first).
    #[inline]
    pub fn began(&mut self, ctx: &mut SwitchCtx, flow: u32, old: Option<u16>, new: u16) {
        self.flowlets += 1;
        let moved = old.is_some_and(|o| o != new);
        self.reroutes += moved as u64;
        if self.events {
            let old = old.unwrap_or(new);
            ctx.record(flow, LbEvent::named(FLOWLET).moved(old, new, ""));
        }
    }

    /// The counts for the run's `switch_stats` (`reroutes` also feeds its `reroutes`).
    pub fn stats(&self) -> Vec<(&'static str, u64)> {
        vec![("flowlets", self.flowlets), ("reroutes", self.reroutes)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;
    use crate::routing::SchemeAction;

    fn flowlets(log: &mut FlowletLog, steps: &[(Option<u16>, u16)]) -> Vec<SchemeAction> {
        let mut world = crate::routing::test_world(&[1; 1], 0);
        let mut rng = Rng::new(1);
        let mut actions = Vec::new();
        let mut ctx = SwitchCtx::new(&mut world, &mut rng, 64, &mut actions);
        for &(old, new) in steps {
            log.began(&mut ctx, 7, old, new);
        }
        actions
    }

    #[test]
    fn counts_flowlets_and_the_moves_among_them_and_records_only_when_asked() {
        let steps = [(None, 2), (Some(2), 2), (Some(2), 5), (Some(5), 1)];
        let mut quiet = FlowletLog::new(false);
        assert!(flowlets(&mut quiet, &steps).is_empty());
        assert_eq!(quiet.stats(), vec![("flowlets", 4), ("reroutes", 2)]);
        let mut loud = FlowletLog::new(true);
        let events: Vec<LbEvent> = flowlets(&mut loud, &steps)
            .into_iter()
            .map(|a| match a {
                SchemeAction::Record { flow: 7, event } => event,
                other => panic!("{other:?}"),
            })
            .collect();
        let expected: Vec<LbEvent> = [(2, 2), (2, 2), (2, 5), (5, 1)]
            .into_iter()
            .map(|(old, new)| LbEvent::named(FLOWLET).moved(old, new, ""))
            .collect();
        assert_eq!(events, expected);
        assert_eq!(loud.stats(), quiet.stats());
    }
}
