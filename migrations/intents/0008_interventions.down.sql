DROP TABLE intervention_applied;
DROP TABLE interventions;
