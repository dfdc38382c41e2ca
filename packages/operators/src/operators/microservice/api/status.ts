/**
 * The Microservice status, one schema for every served version (ADR 0024): only the operator
 * writes it, readers of an older version ignore what they do not know, and a shared schema makes
 * the status convert as is.
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import { ConditionsSchema } from '@converge/runtime';
import { MicroservicePhase } from './constants.ts';

const PhaseSchema = Type.Union(
  [Type.Literal(MicroservicePhase.Accepted), Type.Literal(MicroservicePhase.ResourcesApplied), Type.Literal(MicroservicePhase.Failed)],
  { description: 'Accepted: input received. ResourcesApplied: Deployment and Service written for observedGeneration. Failed: cannot be applied (see reason).' },
);

const Count = (description: string) => Type.Integer({ description, minimum: 0, format: 'int32' });

export const MicroserviceStatusSchema = Type.Object(
  {
    phase: Type.Optional(PhaseSchema),
    observedGeneration: Type.Optional(Type.Integer({ description: 'The metadata.generation this status describes.', minimum: 0, format: 'int64' })),
    conditions: Type.Optional(ConditionsSchema('Ready, Progressing, Reconciling and Stalled (the last two are what kstatus reads), each with the generation it was computed for.')),
    managedResources: Type.Optional(
      Type.Object(
        {
          deployment: Type.Optional(Type.String({ description: 'Name of the managed Deployment.' })),
          service: Type.Optional(Type.String({ description: 'Name of the managed Service.' })),
        },
        { description: 'Objects written for this Microservice; cleared when it fails (the objects are not deleted).' },
      ),
    ),
    rollout: Type.Optional(
      Type.Object(
        {
          replicas: Count('Desired replicas.'),
          updatedReplicas: Count('Replicas running the pod template of the current generation.'),
          availableReplicas: Count('Available replicas.'),
          readyEndpoints: Count('Ready endpoints of the Service.'),
        },
        { description: 'Rollout summary of the managed Deployment and Service.' },
      ),
    ),
    reason: Type.Optional(Type.String({ description: 'Why the phase is what it is, in CamelCase.', maxLength: 1024 })),
    message: Type.Optional(Type.String({ description: 'Human-readable detail for the phase.', maxLength: 32768 })),
  },
  { description: 'What the operator observed; written only by the operator through the status subresource.' },
);

export type MicroserviceStatus = Static<typeof MicroserviceStatusSchema>;
