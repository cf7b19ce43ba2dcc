/**
 * Chat: a short friendly reply (one line, at most 100 characters, no code, no JSON) to small
 * talk about a topic or a feeling. Train and held-out pools share no topic and no wording.
 */
import { type Family, fill, type SplitFamily } from "./types";

export interface ChatTopic {
  /** The topic as it appears in prompts ("rainy days"). */
  topic: string;
  reply: string;
}

const TOPICS_TRAIN: readonly ChatTopic[] = [
  { topic: "rainy days", reply: "Rainy days are cozy: perfect for tea, a blanket and a good book." },
  { topic: "morning coffee", reply: "Morning coffee is a lovely ritual. A warm cup starts the day gently." },
  { topic: "long walks", reply: "Long walks are wonderful for clearing the mind and enjoying fresh air." },
  { topic: "board games", reply: "Board games are great fun, especially with friends and a few snacks." },
  { topic: "cats", reply: "Cats are charming: independent, curious and always ready for a nap." },
  { topic: "dogs", reply: "Dogs are the best companions: loyal, playful and always happy to see you." },
  {
    topic: "summer holidays",
    reply: "Summer holidays are a treat: sun, rest and time with people you love.",
  },
  {
    topic: "cooking at home",
    reply: "Cooking at home is relaxing, and you know exactly what is on your plate.",
  },
  { topic: "gardening", reply: "Gardening is so rewarding. Watching plants grow brings real calm." },
  { topic: "learning languages", reply: "Learning languages opens doors. A few words a day really add up!" },
  { topic: "reading before bed", reply: "Reading before bed is a great habit that helps you wind down." },
  { topic: "jazz music", reply: "Jazz is full of life. Its improvisation makes every listen feel new." },
  {
    topic: "mountain hikes",
    reply: "Mountain hikes are amazing: fresh air, big views and happy tired legs.",
  },
  { topic: "baking bread", reply: "Baking bread is pure joy, and the smell of a fresh loaf is unbeatable." },
  { topic: "early mornings", reply: "Early mornings are peaceful. The quiet hours make a calm start." },
  { topic: "playing the guitar", reply: "Playing the guitar is a lovely skill. Practice a little each day!" },
  { topic: "riding a bike", reply: "Riding a bike is freeing, healthy and kind to the planet." },
  { topic: "snowy winters", reply: "Snowy winters look magical, and hot cocoa tastes even better then." },
  { topic: "old movies", reply: "Old movies have such charm. Their stories still feel timeless." },
  { topic: "road trips", reply: "Road trips are a great adventure, with music, snacks and new places." },
  { topic: "drawing", reply: "Drawing is a wonderful way to relax and look at the world closely." },
  { topic: "yoga", reply: "Yoga is great for body and mind. Even a few minutes can help." },
  {
    topic: "birthday parties",
    reply: "Birthday parties are so much fun: cake, friends and a few surprises.",
  },
  { topic: "visiting museums", reply: "Museums are fascinating places, full of stories from the past." },
  { topic: "swimming", reply: "Swimming is a joyful workout that feels light and refreshing." },
  { topic: "farmers markets", reply: "Farmers markets are great for fresh food and friendly chats." },
  { topic: "chess", reply: "Chess is a beautiful game that rewards patience and planning." },
  { topic: "stargazing", reply: "Stargazing is magical. A clear night sky makes you feel calm." },
  { topic: "camping", reply: "Camping is a fun escape: a tent, a fire and the sounds of nature." },
  { topic: "spicy food", reply: "Spicy food is exciting! A little heat can make a meal unforgettable." },
  { topic: "autumn leaves", reply: "Autumn leaves are gorgeous, with all their reds, oranges and golds." },
  {
    topic: "writing letters",
    reply: "Writing letters is a thoughtful habit. A handwritten note means a lot.",
  },
  { topic: "jigsaw puzzles", reply: "Jigsaw puzzles are a great way to relax and keep the mind sharp." },
  { topic: "the ocean", reply: "The ocean is breathtaking: endless waves and a soothing sound." },
  { topic: "fresh fruit", reply: "Fresh fruit is a sweet and healthy treat, especially in season." },
  { topic: "podcasts", reply: "Podcasts are great company on a commute or a long walk." },
  { topic: "dancing", reply: "Dancing is pure joy. It lifts the mood, even in the kitchen!" },
  { topic: "green tea", reply: "Green tea is lovely: calming, warm and gentle on a busy day." },
  { topic: "quiet weekends", reply: "Quiet weekends are precious. Rest is good for you." },
  { topic: "video games", reply: "Video games can be great fun, and playing with friends is even better." },
];

const TOPICS_HELDOUT: readonly ChatTopic[] = [
  { topic: "sunny afternoons", reply: "Sunny afternoons are lovely: warm light and time to slow down." },
  {
    topic: "roller coasters",
    reply: "Roller coasters are a thrill! The rush makes everyone scream and laugh.",
  },
  { topic: "pottery", reply: "Pottery is so calming. Shaping clay with your hands is very satisfying." },
  { topic: "card games", reply: "Card games are a classic: easy to bring anywhere and fun for all ages." },
  { topic: "thunderstorms", reply: "Thunderstorms are dramatic and beautiful to watch from a safe spot." },
  { topic: "street food", reply: "Street food is a delight: tasty, quick and full of local flavor." },
  { topic: "lighthouses", reply: "Lighthouses are charming, standing guard by the sea for ships." },
  { topic: "hot chocolate", reply: "Hot chocolate is the perfect warm treat on a cold evening." },
  { topic: "knitting", reply: "Knitting is relaxing, and you end up with something cozy to wear." },
  { topic: "train journeys", reply: "Train journeys are great: lovely views and time to read or rest." },
];

export interface ChatFeeling {
  feeling: string;
  reply: string;
}

const FEELINGS_TRAIN: readonly ChatFeeling[] = [
  { feeling: "tired", reply: "Sorry you're tired. A short break and a glass of water can help a lot." },
  { feeling: "happy", reply: "That's wonderful to hear! Enjoy every bit of that good mood." },
  { feeling: "nervous", reply: "Feeling nervous is normal. Take a slow breath, you can do this." },
  { feeling: "bored", reply: "Bored? Maybe try a short walk, a new song or a quick puzzle." },
  { feeling: "excited", reply: "How exciting! I hope whatever is coming goes wonderfully." },
  { feeling: "stressed", reply: "Sorry you're stressed. One small step at a time, and rest when you can." },
  { feeling: "lonely", reply: "I'm here to chat. Reaching out to a friend can help too." },
  { feeling: "proud", reply: "You should be proud! Well done, enjoy the moment." },
  { feeling: "sleepy", reply: "Sounds like you need some rest. A good night's sleep works wonders." },
  {
    feeling: "grateful",
    reply: "Gratitude is a lovely feeling. It's great that you notice the good things.",
  },
];

const FEELINGS_HELDOUT: readonly ChatFeeling[] = [
  { feeling: "hopeful", reply: "Hope is a great feeling. Keep going, good things can happen." },
  { feeling: "anxious", reply: "Sorry you feel anxious. Slow breaths and a short pause can help." },
  { feeling: "cheerful", reply: "Love that cheerful mood! Share it with someone today." },
  { feeling: "restless", reply: "Restless days happen. A bit of movement or fresh air may help." },
];

const topicFamily = (
  name: string,
  subjects: readonly ChatTopic[],
  wordings: string[],
): Family<ChatTopic> => ({
  name,
  subjects,
  wordings,
  keys: (s) => [s.topic],
  prompt: (w, s) => fill(w, { s: s.topic }),
  answer: (s) => s.reply,
});

const feelingFamily = (
  name: string,
  subjects: readonly ChatFeeling[],
  wordings: string[],
): Family<ChatFeeling> => ({
  name,
  subjects,
  wordings,
  keys: (s) => [s.feeling],
  prompt: (w, s) => fill(w, { s: s.feeling }),
  answer: (s) => s.reply,
});

export const CHAT_TOPICS: SplitFamily<ChatTopic> = {
  train: topicFamily("chat-topics", TOPICS_TRAIN, [
    "What do you think about {s}?",
    "Do you like {s}?",
    "Tell me something nice about {s}.",
    "How do you feel about {s}?",
    "Any thoughts on {s}?",
    "I've been thinking about {s}. What's your take?",
    "Chat with me about {s}.",
    "Let's talk about {s}.",
  ]),
  heldout: topicFamily("chat-topics-heldout", TOPICS_HELDOUT, [
    "Quick question: are you a fan of {s}?",
    "What's your opinion of {s}?",
    "Say a few friendly words about {s}.",
    "I'm curious what you make of {s}.",
    "Share your view on {s}, please.",
  ]),
  counts: { train: 160, heldout: 28 },
};

export const CHAT_FEELINGS: SplitFamily<ChatFeeling> = {
  train: feelingFamily("chat-feelings", FEELINGS_TRAIN, [
    "I feel {s} today.",
    "Today I'm {s}.",
    "Honestly, I'm a bit {s}.",
    "I'm so {s} right now.",
    "Just wanted to say I'm {s}.",
    "Feeling {s} this evening.",
  ]),
  heldout: feelingFamily("chat-feelings-heldout", FEELINGS_HELDOUT, [
    "At the moment I am quite {s}.",
    "I woke up feeling {s} this morning.",
    "You know what, I'm really {s} lately.",
  ]),
  counts: { train: 40, heldout: 8 },
};
