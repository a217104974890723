//! Where the reflector writes what it observes (client-go `tools/cache/reflector.go`,
//! `ReflectorStore`): single-object changes from the watch and whole-state replacements from
//! each (re)list.

/// Receives the reflector's output, in order. Implementations must not block for long: they run
/// on the reflector's task (the shared informer applies the change to its cache and hands
/// notifications to per-handler buffers).
pub trait ReflectorStore<K>: Send {
    /// A watch ADDED event.
    fn add(&mut self, obj: K);
    /// A watch MODIFIED event.
    fn update(&mut self, obj: K);
    /// A watch DELETED event; `obj` is the last state sent by the server.
    fn delete(&mut self, obj: K);
    /// The complete state from a (re)list or a streaming list, at `resource_version`. Objects
    /// known before but absent here were deleted while nobody was watching.
    fn replace(&mut self, objects: Vec<K>, resource_version: String);
    /// A watch BOOKMARK: the state is current as of `resource_version`.
    fn bookmark(&mut self, _resource_version: &str) {}
    /// The complete state of one part of the store, the objects `part` selects, from a list at
    /// `resource_version` (a shard that grew or is listed afresh, [`ShardChange`]). Objects
    /// outside the part stay as they are; known objects of the part absent from `objects` were
    /// deleted while nobody was watching. Returns `false`, having changed nothing, when the
    /// store cannot replace a part (the default): the reflector then lists everything afresh.
    ///
    /// [`ShardChange`]: crate::ShardChange
    fn replace_part(
        &mut self,
        _part: &(dyn Fn(&K) -> bool + Sync),
        _objects: Vec<K>,
        _resource_version: &str,
    ) -> bool {
        false
    }
}
