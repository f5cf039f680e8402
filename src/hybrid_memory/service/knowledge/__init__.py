"""From conversations to knowledge: feedback, thread summaries, the graph map, distillation, consolidation."""
