// Every part of one Parley process, made in dependency order before any of them starts (issue 31, part 5); the
// parts that need each other both ways meet through the ports made first (`ports.ts`).
import type { Services } from '../services.ts';
import { makeChannels, makeCluster, makeTooling, type ChannelParts, type ClusterParts, type ToolingParts } from './base-parts.ts';
import { makeConversations, type ConversationParts } from './conversation-parts.ts';
import { makeFeatures, type FeatureParts } from './feature-parts.ts';
import type { Ports } from './ports.ts';

export interface Parts {
  cluster: ClusterParts;
  channels: ChannelParts;
  tooling: ToolingParts;
  conversations: ConversationParts;
  features: FeatureParts;
}

export async function makeParts(services: Services, ports: Ports): Promise<Parts> {
  const cluster = makeCluster(services, ports);
  const channels = makeChannels(services, ports, cluster);
  const tooling = await makeTooling(services, ports, cluster, channels);
  const conversations = makeConversations(services, ports, { cluster, channels, tooling });
  const features = makeFeatures(services, { cluster, channels, tooling, conversations });
  return { cluster, channels, tooling, conversations, features };
}
