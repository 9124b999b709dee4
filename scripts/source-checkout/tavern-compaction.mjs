// AgentTavern's compaction curator as a plugin module the headless CLI loads by file URL (compaction.patch.yml).
// Bundled with tavern-host.mjs by bundle-plugins.mjs, so both share one TavernCompactionCurator class: AgentTavern
// recognises its curator by that class.
export { default } from '@dsh-seam/agent-tavern/compaction'
